"""Relaying a whole TCP connection elsewhere (:class:`paseo_hookspecs.http.HttpForwarding`).

Once the host decides that a connection's ``Host`` names a forwarded service, the connection
stops being the listener's: its bytes (the request head already read included) go to the
service and the service's bytes come back, unparsed, so HTTP bodies stream both ways and a
WebSocket upgrade passes through. Memory stays bounded by the transports' write buffers: when
one side's buffer passes its high-water mark, reading from the other side pauses until it
drains. Either side closing closes the other; an end of input is passed on as a half-close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import cast

log = logging.getLogger("paseo.websocket.forward")

CONNECT_TIMEOUT = 5.0

MAX_HEAD = 16 * 1024
"""Bytes of a request head read to find its ``Host``; a longer head is not forwarded."""


def status_response(status: int, text: str) -> bytes:
    body = (text + "\n").encode()
    return (
        f"HTTP/1.1 {status} {text}\r\ncontent-type: text/plain\r\n"
        f"content-length: {len(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n"
    ).encode() + body


REASONS = {403: "Forbidden", 404: "Not Found", 502: "Bad Gateway", 503: "Service Unavailable"}


def host_of(head: bytes) -> str | None:
    """The value of the request head's single ``Host`` header (``None``: none, or several)."""
    hosts = []
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"host":
            hosts.append(value.strip().decode("latin-1"))
    return hosts[0] if len(hosts) == 1 else None


class Relay(asyncio.Protocol):
    """One side of a relay: what its transport receives is written to ``peer``."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: asyncio.Transport | None = None
        self._pending: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, only alike.
        self.transport = cast(asyncio.Transport, transport)

    def attach(self, peer: asyncio.Transport) -> None:
        self.peer = peer
        for chunk in self._pending:
            peer.write(chunk)
        self._pending.clear()

    def data_received(self, data: bytes) -> None:
        if self.peer is None:
            self._pending.append(data)  # only before attach, while reading is paused
        else:
            self.peer.write(data)

    def eof_received(self) -> bool:
        if self.peer is not None and self.peer.can_write_eof():
            with contextlib.suppress(OSError, RuntimeError):
                self.peer.write_eof()
            return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.peer is not None:
            self.peer.close()

    def pause_writing(self) -> None:
        if self.peer is not None:
            self.peer.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and not self.peer.is_closing():
            self.peer.resume_reading()


def forward(client: asyncio.Transport, head: bytes, target: tuple[str, int]) -> None:
    """Make ``client`` (whose first bytes were ``head``) a relay to ``target``."""
    side = Relay()
    client.set_protocol(side)
    side.connection_made(client)
    client.pause_reading()

    async def connect() -> None:
        loop = asyncio.get_running_loop()
        try:
            upstream, other = await asyncio.wait_for(
                loop.create_connection(Relay, target[0], target[1]), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError) as exc:
            log.info("forwarding to %s:%s failed: %s", target[0], target[1], exc)
            if not client.is_closing():
                client.write(status_response(502, REASONS[502]))
                client.close()
            return
        if client.is_closing():
            upstream.close()
            return
        other.attach(client)
        upstream.write(head)
        side.attach(upstream)
        client.resume_reading()

    task = asyncio.get_running_loop().create_task(connect(), name="http-forward-connect")
    _connecting.add(task)
    task.add_done_callback(_connecting.discard)


_connecting: set[asyncio.Task[None]] = set()
"""Connects in flight (a task nobody references may be collected mid-flight)."""
