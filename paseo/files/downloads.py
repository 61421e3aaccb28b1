"""Download tokens and the ``/api/files/download`` route.

A client that may read a workspace file asks for a token (``fs.downloadToken``); the token
names that one file for :data:`TOKEN_TTL` seconds and is consumed by its first use, as the
TypeScript daemon's ``DownloadTokenStore``. The route needs no other credential: a browser
follows a plain link (it cannot add a header), and the token, unguessable and issued only to
an admitted session that may read the file, is the credential. At most :data:`MAX_TOKENS`
wait at once (the oldest is dropped first), so a client asking for tokens it never uses
cannot grow the daemon's memory.

The file is streamed in :data:`CHUNK` pieces, opened without following a link (the path was
resolved when the token was issued), so the daemon never holds a whole file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from paseo_hookspecs.http import AsgiApp, AsgiReceive, AsgiScope, AsgiSend, send_plain

if TYPE_CHECKING:
    from paseo.files.explorer import Downloadable

DOWNLOAD_PATH = "/api/files/download"
TOKEN_TTL = 60.0
MAX_TOKENS = 1024
CHUNK = 256 * 1024


@dataclass(frozen=True)
class Ticket:
    token: str
    file: Downloadable
    expires: float


class DownloadTokens:
    """Single-use, short-lived tokens (see the module docstring); ``clock`` is monotonic."""

    def __init__(self, ttl: float = TOKEN_TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._tickets: OrderedDict[str, Ticket] = OrderedDict()

    def issue(self, file: Downloadable) -> Ticket:
        now = self._clock()
        for token in [t for t, ticket in self._tickets.items() if ticket.expires <= now]:
            del self._tickets[token]
        while len(self._tickets) >= MAX_TOKENS:
            self._tickets.popitem(last=False)
        ticket = Ticket(secrets.token_urlsafe(32), file, now + self.ttl)
        self._tickets[ticket.token] = ticket
        return ticket

    def consume(self, token: str) -> Ticket | None:
        """The ticket of ``token`` if it is known and not expired; either way it is spent."""
        ticket = self._tickets.pop(token, None)
        if ticket is None or ticket.expires <= self._clock():
            return None
        return ticket

    def __len__(self) -> int:
        return len(self._tickets)


def _disposition(name: str) -> bytes:
    safe = "".join("_" if c in '"\r\n' else c for c in name)
    return f'attachment; filename="{safe}"'.encode("latin-1", "replace")


def download_app(tokens: DownloadTokens) -> AsgiApp:
    """The ASGI app of :data:`DOWNLOAD_PATH` over ``tokens``."""

    async def app(scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await send_plain(send, 405, "Method Not Allowed")
            return
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        token = (query.get("token") or [""])[0].strip()
        if not token:
            await send_plain(send, 400, "Missing download token")
            return
        ticket = tokens.consume(token)
        if ticket is None:
            await send_plain(send, 403, "Invalid or expired token")
            return
        try:
            fd = await asyncio.to_thread(
                os.open, ticket.file.absolutePath, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            )
        except OSError:
            await send_plain(send, 404, "File not found")
            return
        try:
            size = os.fstat(fd).st_size
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", ticket.file.mimeType.encode()),
                        (b"content-disposition", _disposition(ticket.file.fileName)),
                        (b"content-length", str(size).encode()),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            left = size if scope.get("method") == "GET" else 0
            while left > 0:
                chunk = await asyncio.to_thread(os.read, fd, min(CHUNK, left))
                if not chunk:  # truncated meanwhile: the length promised cannot be kept
                    break
                left -= len(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": left > 0})
            if left > 0 or size == 0 or scope.get("method") == "HEAD":
                await send({"type": "http.response.body", "body": b""})
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)

    return app
