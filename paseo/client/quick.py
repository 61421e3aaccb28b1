"""A minimal synchronous HTTP GET for the CLI's fast paths (``paseo daemon status``).

Standard library only, and only ``socket`` and ``json`` at that: the status command must cost
little more than starting Python, so it cannot import asyncio, websockets or pydantic.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from paseo.rpc.address import Address

MAX_RESPONSE = 4 * 1024 * 1024


class QuickHttpError(OSError):
    """The daemon could not be reached, or answered something unreadable."""


def get_json(
    address: Address, path: str, *, token: str | None = None, timeout: float = 5.0
) -> tuple[int, Any]:
    """``GET path`` on the daemon; returns the HTTP status and the decoded JSON body
    (``None`` when the body is not JSON). Raises :class:`OSError` when unreachable."""
    if address.path is not None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        target: Any = address.path
    else:
        family = socket.AF_INET6 if ":" in (address.host or "") else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        target = (address.host, address.port)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {address.host_header()}",
            "Accept: application/json",
            "Connection: close",
        ]
        if token:
            lines.append(f"Authorization: Bearer {token}")
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        chunks: list[bytes] = []
        received = 0
        while received < MAX_RESPONSE:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            received += len(chunk)
    finally:
        sock.close()
    raw = b"".join(chunks)
    head, sep, body = raw.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    if not sep or len(status_line) < 2 or not status_line[1].isdigit():
        raise QuickHttpError(f"unreadable answer from {address}")
    try:
        data = json.loads(body) if body.strip() else None
    except ValueError:
        data = None
    return int(status_line[1]), data
