"""A small HTTP/1.1 server side over asyncio streams: enough for the fake Hub's routes.

websockets' own HTTP handling serves only GET, and the Hub's enrollment and revocation are
POST and DELETE, so requests are parsed here; WebSocket upgrades are handed to
:mod:`paseo.testing.fake_hub.socket` with the bytes already read.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

MAX_HEAD = 64 * 1024
MAX_BODY = 1024 * 1024


class BadRequest(Exception):
    """The bytes are not an HTTP/1.1 request this server understands."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, list[str]]
    """Lowercased names; every value of a repeated header."""
    body: bytes
    head: bytes
    """The raw request line and headers (a WebSocket handshake is re-parsed from them)."""

    def header(self, name: str) -> str | None:
        """The header's only value (``None`` when absent or repeated)."""
        values = self.headers.get(name.lower(), [])
        return values[0] if len(values) == 1 else None

    def bearer(self) -> str | None:
        value = self.header("authorization")
        if value is None:
            return None
        scheme, _, token = value.partition(" ")
        return token.strip() or None if scheme.lower() == "bearer" else None

    def json(self) -> Any:
        return json.loads(self.body)


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request, or ``None`` at a clean end of stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise BadRequest("truncated request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest("request head too large") from None
    lines = head[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("bad request line")
    headers: dict[str, list[str]] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest("bad header line")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    length_values = headers.get("content-length", ["0"])
    if len(length_values) != 1 or not length_values[0].isdigit():
        raise BadRequest("bad Content-Length")
    length = int(length_values[0])
    if length > MAX_BODY:
        raise BadRequest("body too large")
    body = await reader.readexactly(length) if length else b""
    return Request(parts[0].upper(), parts[1], headers, body, head)


def response(
    status: int, body: Any = None, *, content_type: str = "application/json"
) -> bytes:
    """A complete response; ``body`` is JSON-encoded unless it is ``bytes``."""
    if body is None:
        data = b""
    elif isinstance(body, bytes):
        data = body
    else:
        data = json.dumps(body).encode()
    phrase = HTTPStatus(status).phrase
    lines = [f"HTTP/1.1 {status} {phrase}", f"Content-Length: {len(data)}", "Connection: close"]
    if data:
        lines.append(f"Content-Type: {content_type}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data
