"""A small HTTP/1.1 client for the loopback OpenCode server: JSON requests and one SSE stream.

The server only ever listens on 127.0.0.1 and is ours, so a full HTTP library buys nothing:
this speaks exactly what ``opencode serve`` answers (``Content-Length`` or chunked bodies, one
request per connection, basic auth) with asyncio streams, and needs no extra dependency.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote, urlencode


class HttpError(Exception):
    """The server answered with a status of 400 or more."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status
        self.body = body


class OpenCodeClient:
    """Requests to one ``opencode serve`` at ``127.0.0.1:port``."""

    def __init__(self, port: int, password: str, *, username: str = "opencode") -> None:
        self.port = port
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        self._auth = f"Basic {token}"

    def _target(self, path: str, query: dict[str, str] | None) -> str:
        return quote(path, safe="/_-.~") + (f"?{urlencode(query)}" if query else "")

    async def _open(
        self, method: str, target: str, body: bytes | None
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int, dict[str, str]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = [
            f"{method} {target} HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            f"Authorization: {self._auth}",
            "Connection: close",
            "Accept: application/json, text/event-stream",
        ]
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + (body or b""))
        await writer.drain()
        status_line = await reader.readline()
        parts = status_line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[1].isdigit():
            writer.close()
            raise ConnectionError(f"the OpenCode server sent no HTTP status ({status_line!r})")
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return reader, writer, int(parts[1]), headers

    async def _body(
        self, reader: asyncio.StreamReader, headers: dict[str, str]
    ) -> AsyncIterator[bytes]:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size_line = await reader.readline()
                if not size_line:
                    return
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    return
                data = await reader.readexactly(size)
                await reader.readline()
                yield data
        elif "content-length" in headers:
            length = int(headers["content-length"])
            if length:
                yield await reader.readexactly(length)
        else:
            while chunk := await reader.read(65536):
                yield chunk

    async def call(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        within: float = 30.0,
    ) -> Any:
        """One request; the decoded JSON answer (``None`` for an empty one)."""
        payload = None if body is None else json.dumps(body).encode()
        async with asyncio.timeout(within):
            reader, writer, status, headers = await self._open(
                method, self._target(path, query), payload
            )
            try:
                data = b"".join([chunk async for chunk in self._body(reader, headers)])
            finally:
                writer.close()
        text = data.decode("utf-8", "replace")
        if status >= 400:
            raise HttpError(status, text)
        return json.loads(text) if text.strip() else None

    async def events(self, path: str, query: dict[str, str] | None = None) -> AsyncIterator[Any]:
        """The server-sent events of ``path``: each ``data:`` payload, decoded. Ends when the
        server closes the stream."""
        reader, writer, status, headers = await self._open("GET", self._target(path, query), None)
        try:
            if status >= 400:
                raise HttpError(status, "")
            buffer = b""
            async for chunk in self._body(reader, headers):
                buffer += chunk
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    data = b"\n".join(
                        line[5:].lstrip()
                        for line in block.split(b"\n")
                        if line.startswith(b"data:")
                    )
                    if data:
                        try:
                            yield json.loads(data)
                        except ValueError:
                            continue
        finally:
            writer.close()
