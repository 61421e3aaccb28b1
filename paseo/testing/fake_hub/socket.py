"""The Hub's side of one daemon WebSocket, on websockets' sans-I/O protocol.

The fake Hub parses HTTP itself (see :mod:`paseo.testing.fake_hub.http`), so the WebSocket
layer is driven directly: the upgrade bytes go to :class:`websockets.server.ServerProtocol`,
which answers pings and close frames by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from websockets.frames import Frame, Opcode
from websockets.http11 import Request as WsRequest
from websockets.server import ServerProtocol

MAX_FRAME = 16 * 1024 * 1024


class HubSocket:
    """An accepted socket: ``send`` text, ``close`` with a code, ``messages`` as they come."""

    def __init__(
        self,
        protocol: ServerProtocol,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self._protocol = protocol
        self._reader = reader
        self._writer = writer
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self._thawed = asyncio.Event()
        self._thawed.set()

    def freeze(self) -> None:
        """Stop reading: pings go unanswered, like a Hub that hangs without closing."""
        self._thawed.clear()

    def _flush(self) -> None:
        for chunk in self._protocol.data_to_send():
            if chunk:
                self._writer.write(chunk)
            else:
                with contextlib.suppress(OSError, RuntimeError):
                    self._writer.write_eof()

    def send(self, text: str) -> None:
        if self.closed.is_set():
            return
        self._protocol.send_text(text.encode())
        self._flush()

    def send_binary(self, data: bytes) -> None:
        if not self.closed.is_set():
            self._protocol.send_binary(data)
            self._flush()

    def close(self, code: int, reason: str) -> None:
        """Send a close frame and drop the connection shortly after (no waiting on the peer)."""
        if self.closed.is_set():
            return
        self.close_code = code
        with contextlib.suppress(Exception):
            self._protocol.send_close(code, reason)
            self._flush()
        asyncio.get_running_loop().call_later(0.5, self._abort)
        self.closed.set()

    def abort(self) -> None:
        self.closed.set()
        self._thawed.set()
        self._abort()

    def _abort(self) -> None:
        self._writer.transport.abort()

    async def run(self, on_text: Callable[[str], None], on_binary: Callable[[], None]) -> None:
        """Read until the connection ends, calling back for each complete message."""
        parts: list[bytes] = []
        binary = False
        try:
            while not self._reader.at_eof():
                await self._thawed.wait()
                data = await self._reader.read(65536)
                if not data:
                    self._protocol.receive_eof()
                else:
                    self._protocol.receive_data(data)
                for event in self._protocol.events_received():
                    if not isinstance(event, Frame):
                        continue
                    if event.opcode in (Opcode.TEXT, Opcode.BINARY):
                        parts, binary = [bytes(event.data)], event.opcode is Opcode.BINARY
                    elif event.opcode is Opcode.CONT:
                        parts.append(bytes(event.data))
                    else:
                        continue
                    if event.fin:
                        if binary:
                            on_binary()
                        else:
                            on_text(b"".join(parts).decode("utf-8", "replace"))
                        parts = []
                self._flush()
                if not data:
                    break
        except (ConnectionError, OSError):
            pass
        finally:
            if self.close_code is None:
                self.close_code = self._protocol.close_code or 1006
            self.closed.set()
            self._abort()


def handshake(head: bytes) -> tuple[ServerProtocol, WsRequest]:
    """Parse an upgrade request from its raw bytes; raises ``ValueError`` when it is not one."""
    protocol = ServerProtocol(max_size=MAX_FRAME)
    protocol.receive_data(head)
    events = protocol.events_received()
    if not events or not isinstance(events[0], WsRequest):
        raise ValueError("not a WebSocket upgrade")
    return protocol, events[0]


def reply(
    protocol: ServerProtocol, request: WsRequest, writer: asyncio.StreamWriter, status: int | None
) -> bool:
    """Accept the upgrade (``status`` ``None``) or refuse it with ``status``; ``True`` when
    the socket is open."""
    answer = protocol.accept(request) if status is None else protocol.reject(status, "refused\n")
    protocol.send_response(answer)
    for chunk in protocol.data_to_send():
        if chunk:
            writer.write(chunk)
    return status is None and answer.status_code == 101
