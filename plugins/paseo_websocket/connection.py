"""The WebSocket connection of one session, with a short path for the frames of the hot path.

websockets hands every message to an ``async for`` reader through its message assembler: a
future and a task switch per frame. Here a complete text frame goes to the session straight
from the parser (:meth:`SessionConnection.process_event`), and a frame the session sends is
written without awaiting when the socket takes it (:meth:`SessionChannel.send_now`, through
:class:`TickWriter`). Everything else keeps websockets' own
path, in order: fragmented, binary or invalid UTF-8 messages, and those that arrive before the
session is attached, are read by :meth:`SessionConnection.feed`; size limits, pings and the
closing handshake are the library's.

Frames taken by ``send_now`` in one event-loop iteration are written at its end, each
connection's in one ``write`` (a stream of many agents publishes dozens of frames a tick; a
syscall per frame per client was most of the daemon's CPU), and a frame published to several
subscribers is encoded to UTF-8 once for all of them. What one connection holds until the end of
the iteration is bounded (:data:`TICK_BYTES`): past it the frames are written at once, and a
client that does not read then has a non-empty transport buffer, so the session queues its
next frames under its own bounds.

``process_event`` is a private hook of websockets (its asyncio ``Connection``): the version is
pinned in pyproject.toml and tests/unit/plugins/test_websocket_connection.py fails if the hook
changes.
"""

from __future__ import annotations

import asyncio
import logging

from paseo_hookspecs.transport import SessionHandle
from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import Event, State

log = logging.getLogger("paseo.websocket")

TICK_BYTES = 64 * 1024
"""Encoded bytes one connection may hold until the end of a loop iteration; past them its frames
are written at once."""


def encode(text: str) -> bytes:
    """A frame's UTF-8 payload (a function, so a test can count the encodings)."""
    return text.encode()


class SessionConnection(ServerConnection):
    """A server connection that feeds a session (see the module docstring)."""

    _session: SessionHandle | None = None
    _queued = 0
    """Messages started on websockets' path that :meth:`feed` has not handed over yet; while
    there are any, new frames take that path too, behind them."""

    def process_event(self, event: Event) -> None:
        if isinstance(event, Frame) and event.opcode is not Opcode.CONT:
            session = self._session
            if (
                session is not None
                and event.opcode is Opcode.TEXT
                and event.fin
                and not self._queued
            ):
                try:
                    text = str(event.data, "utf-8")
                except UnicodeDecodeError:
                    pass  # websockets' reader fails the connection with 1007, as always
                else:
                    session.receive(text)
                    return
            if event.opcode in (Opcode.TEXT, Opcode.BINARY):
                self._queued += 1
        super().process_event(event)

    async def feed(self, session: SessionHandle) -> None:
        """Hand every inbound message to ``session`` until the connection closes (raises
        :exc:`~websockets.exceptions.ConnectionClosed` when it closes on an error)."""
        self._session = session
        async for message in self:
            self._queued -= 1
            session.receive(message)


class TickWriter:
    """The frames of one loop iteration, per connection, written at its end (see the module
    docstring). One per event loop: :func:`tick_writer`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pending: dict[ServerConnection, list[bytes]] = {}
        self._sizes: dict[ServerConnection, int] = {}
        self._encoded: tuple[str, bytes] | None = None
        """The last frame encoded and its bytes: a frame published to every subscriber comes
        to each of them in turn, and is encoded once (cleared at the end of the iteration)."""
        self._scheduled = False

    def add(self, connection: ServerConnection, text: str) -> None:
        cached = self._encoded
        if cached is not None and cached[0] is text:
            data = cached[1]
        else:
            data = encode(text)
            self._encoded = (text, data)
        frames = self._pending.get(connection)
        if frames is None:
            frames = self._pending[connection] = []
            self._sizes[connection] = 0
        frames.append(data)
        size = self._sizes[connection] + len(data)
        self._sizes[connection] = size
        if size >= TICK_BYTES:
            self.flush(connection)
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush_all)

    def flush(self, connection: ServerConnection) -> None:
        """Write what ``connection`` holds now (before another write of it, to keep order)."""
        frames = self._pending.pop(connection, None)
        self._sizes.pop(connection, None)
        if frames:
            _write(connection, frames)

    def _flush_all(self) -> None:
        self._scheduled = False
        self._encoded = None
        pending, self._pending = self._pending, {}
        self._sizes = {}
        for connection, frames in pending.items():
            _write(connection, frames)


def _write(connection: ServerConnection, frames: list[bytes]) -> None:
    if connection.protocol.state is not State.OPEN:
        return  # closing or gone: its reader ends the session
    protocol = connection.protocol
    try:
        for data in frames:
            protocol.send_text(data)
        chunks = protocol.data_to_send()
        connection.transport.write(b"".join(chunks))
    except Exception as error:  # noqa: BLE001 - a failed write means the connection is gone;
        # its reader ends the session.
        log.debug("a write to a closing connection failed: %s", error)


_writers: dict[asyncio.AbstractEventLoop, TickWriter] = {}


def tick_writer(loop: asyncio.AbstractEventLoop) -> TickWriter:
    """The :class:`TickWriter` of ``loop``."""
    writer = _writers.get(loop)
    if writer is None:
        for stale in [other for other in _writers if other.is_closed()]:
            del _writers[stale]
        writer = _writers[loop] = TickWriter(loop)
    return writer


class SessionChannel:
    """The :class:`paseo_hookspecs.transport.ImmediateChannel` of one WebSocket connection."""

    __slots__ = ("_connection", "_writer")

    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection
        self._writer: TickWriter | None = None

    def _tick(self) -> TickWriter:
        writer = self._writer
        if writer is None:
            writer = self._writer = tick_writer(asyncio.get_running_loop())
        return writer

    def send_now(self, text: str) -> bool:
        connection = self._connection
        # Nothing left in the transport's buffer: the socket takes the frame now, and a client
        # that does not read gets the queued path and its bounds from the next frame on.
        if (
            connection.state is not State.OPEN
            or connection.send_in_progress is not None
            or connection.transport.get_write_buffer_size()
        ):
            return False
        self._tick().add(connection, text)
        return True

    async def send(self, text: str) -> None:
        self._tick().flush(self._connection)
        await self._connection.send(text)

    async def close(self, code: int, reason: str) -> None:
        self._tick().flush(self._connection)
        await self._connection.close(code, reason)
