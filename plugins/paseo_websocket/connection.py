"""The WebSocket connection of one session, with a short path for the frames of the hot path.

websockets hands every message to an ``async for`` reader through its message assembler: a
future and a task switch per frame. Here a complete text frame goes to the session straight
from the parser (:meth:`SessionConnection.process_event`), and a frame the session sends is
written without awaiting when the socket takes it (:meth:`SessionChannel.send_now`, through
the public :func:`~websockets.asyncio.server.broadcast`). Everything else keeps websockets' own
path, in order: fragmented, binary or invalid UTF-8 messages, and those that arrive before the
session is attached, are read by :meth:`SessionConnection.feed`; size limits, pings and the
closing handshake are the library's.

``process_event`` is a private hook of websockets (its asyncio ``Connection``): the version is
pinned in pyproject.toml and tests/unit/plugins/test_websocket_connection.py fails if the hook
changes.
"""

from __future__ import annotations

import contextlib

from paseo_hookspecs.transport import SessionHandle
from websockets.asyncio.server import ServerConnection, broadcast
from websockets.frames import Frame, Opcode
from websockets.protocol import Event, State


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


class SessionChannel:
    """The :class:`paseo_hookspecs.transport.ImmediateChannel` of one WebSocket connection."""

    __slots__ = ("_connection",)

    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection

    def send_now(self, text: str) -> bool:
        connection = self._connection
        # Nothing left in the transport's buffer: the socket takes the frame now, and a client
        # that does not read gets the queued path and its bounds from the next frame on.
        if connection.state is not State.OPEN or connection.transport.get_write_buffer_size():
            return False
        # A failed write means the connection is gone: its reader ends the session.
        with contextlib.suppress(ExceptionGroup):
            broadcast((connection,), text, raise_exceptions=True)
        return True

    async def send(self, text: str) -> None:
        await self._connection.send(text)

    async def close(self, code: int, reason: str) -> None:
        await self._connection.close(code, reason)
