"""``GET /api/files/download?token=…`` on the TypeScript listener.

The app builds a download's address from the daemon address it connected to (the TypeScript
daemon serves the route on its one port), so this listener answers it too, with the daemon's
own mounted route (:class:`paseo_hookspecs.http.HttpMountHost`, the ``files`` room's: the
single-use token is the credential, the daemon's screening of ``Host`` and ``Origin`` comes
first). The websockets server answers a request with one buffered response, so at most
:data:`MAX_BODY` bytes are served here and :data:`MAX_CONCURRENT` downloads at once (a larger
file answers 413 naming the daemon's own address, which streams it): a burst of downloads
cannot grow the daemon's memory without bound.
"""

from __future__ import annotations

import http
from collections.abc import MutableMapping
from typing import Any

from paseo_hookspecs.http import AsgiApp
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

PATH = "/api/files/download"
MAX_BODY = 64 * 1024 * 1024
MAX_CONCURRENT = 2

_serving = 0
"""Downloads being answered now (one event loop: a plain counter; beyond the cap, 503)."""


def _plain(status: int, text: str) -> Response:
    body = (text + "\n").encode()
    headers = Headers(
        [
            ("Content-Type", "text/plain"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            ("Connection", "close"),
        ]
    )
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


async def serve(
    app: AsgiApp, request: Request, client: tuple[str, int] | None, server: Any
) -> Response:
    """Run the mounted ``app`` for ``request`` and buffer its answer (bounded)."""
    global _serving
    if _serving >= MAX_CONCURRENT:
        return _plain(503, "Too many downloads at once; try again")
    path, _, query = request.path.partition("?")
    scope: MutableMapping[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode("latin-1"),
        "headers": [
            (k.lower().encode("latin-1"), v.encode("latin-1"))
            for k, v in request.headers.raw_items()
        ],
        "client": client,
        "server": server,
    }
    status = 500
    headers: list[tuple[str, str]] = []
    body = bytearray()
    too_large = False

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status, too_large
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers.extend(
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]
            )
        elif message["type"] == "http.response.body" and not too_large:
            body.extend(message.get("body", b""))
            if len(body) > MAX_BODY:
                too_large = True
                body.clear()

    _serving += 1
    try:
        await app(scope, receive, send)
    finally:
        _serving -= 1
    if too_large:
        return _plain(
            413,
            f"The file is larger than {MAX_BODY} bytes: download it from the daemon's own address",
        )
    kept = [(k, v) for k, v in headers if k.lower() not in ("content-length", "connection")]
    kept += [("Content-Length", str(len(body))), ("Connection", "close")]
    return Response(status, http.HTTPStatus(status).phrase, Headers(kept), bytes(body))
