"""A small HTTP/1.1 server layer on asyncio streams: just what the fake model server needs.

It parses one request at a time per connection (keep-alive by default, ``Connection: close``
honoured), reads ``Content-Length`` and chunked request bodies, answers ``Expect: 100-continue``,
and writes either a whole response or a chunked stream (used for SSE). It is not a general web
server: no pipelining guarantees beyond sequential reads, no trailers, no compression support
except decoding gzip/deflate request bodies (clients rarely compress requests, but some do).
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import urlsplit

# Headers bigger than this are refused; bodies are not limited (agent requests with long
# histories are several hundred kilobytes).
MAX_HEADER_BYTES = 256 * 1024


class BadRequest(Exception):
    """The bytes on the connection are not an HTTP/1.1 request we can parse."""


@dataclass
class HttpRequest:
    """One parsed request. Header names are lower-cased; repeated headers are joined with ``, ``."""

    method: str
    target: str
    path: str
    query: str
    version: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def keep_alive(self) -> bool:
        """Whether the client wants the connection kept open after this exchange."""
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> HttpRequest | None:
    """Read one request; ``None`` when the client closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequest("connection closed inside the request head") from exc
    except asyncio.LimitOverrunError as exc:
        raise BadRequest("request head too large") from exc
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError as exc:
        raise BadRequest(f"malformed request line {lines[0]!r}") from exc
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(f"malformed header line {line!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    parts = urlsplit(target)
    request = HttpRequest(
        method=method.upper(),
        target=target,
        path=parts.path or "/",
        query=parts.query,
        version=version.strip(),
        headers=headers,
    )
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    request.body = _decode_body(await _read_body(reader, headers), headers)
    return request


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError as exc:
                raise BadRequest(f"bad chunk size {size_line!r}") from exc
            if size == 0:
                # Skip optional trailers up to the blank line that ends the body.
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = headers.get("content-length")
    if length is None:
        return b""
    try:
        size = int(length)
    except ValueError as exc:
        raise BadRequest(f"bad Content-Length {length!r}") from exc
    return await reader.readexactly(size) if size > 0 else b""


def _decode_body(body: bytes, headers: dict[str, str]) -> bytes:
    encoding = headers.get("content-encoding", "").lower().strip()
    if not body or encoding in ("", "identity"):
        return body
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompress(body)
    # Unknown encodings (zstd, br) are kept raw: the request is still recorded, just not parsed.
    return body


def _status_line(status: int) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    return f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1")


def _header_block(headers: dict[str, str]) -> bytes:
    return b"".join(f"{k}: {v}\r\n".encode("latin-1") for k, v in headers.items()) + b"\r\n"


class ResponseWriter:
    """Writes the single response to one request (whole, or as a chunked stream)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        keep_alive: bool,
        head_only: bool,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._keep_alive = keep_alive
        self._head_only = head_only
        self.status: int | None = None

    @property
    def client_gone(self) -> bool:
        """True once the peer closed or reset the connection (checked between stream chunks)."""
        return self._writer.is_closing() or self._reader.at_eof()

    def _connection_header(self) -> str:
        return "keep-alive" if self._keep_alive else "close"

    async def send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send a complete response with a ``Content-Length``."""
        self.status = status
        all_headers = {
            "content-type": content_type,
            "content-length": str(len(body)),
            "connection": self._connection_header(),
            **(headers or {}),
        }
        self._writer.write(_status_line(status) + _header_block(all_headers))
        if not self._head_only:
            self._writer.write(body)
        await self._writer.drain()

    async def start_stream(self, status: int, content_type: str) -> None:
        """Send the head of a chunked response; follow with :meth:`write_chunk` and :meth:`end`."""
        self.status = status
        all_headers = {
            "content-type": content_type,
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
            "connection": self._connection_header(),
        }
        self._writer.write(_status_line(status) + _header_block(all_headers))
        await self._writer.drain()

    async def write_chunk(self, data: bytes) -> None:
        """Write one chunk and flush it to the socket (so streaming is observable)."""
        if not data:
            return
        self._writer.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
        await self._writer.drain()

    async def end_stream(self) -> None:
        """Write the terminating zero-length chunk."""
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()
