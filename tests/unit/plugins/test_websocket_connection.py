"""The WebSocket transport's short path (plugins/paseo_websocket/connection.py), on a real
websockets server and client.

It relies on a private hook of websockets (``Connection.process_event``): these tests fail
loudly when an upgrade changes it, so the pin in pyproject.toml is moved only with them green.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import websockets
from paseo_websocket import connection as connection_module
from paseo_websocket.connection import SessionChannel, SessionConnection
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode, Frame
from websockets.protocol import Event

Got = tuple[str | bytes, bool]
"""A message the session received, and whether it came straight from the parser (outside any
task) rather than through websockets' own reader (the handler's task)."""


class Recorder:
    """A session that records what it receives."""

    def __init__(self) -> None:
        self.got: list[Got] = []
        self.arrived = asyncio.Condition()

    def receive(self, frame: str | bytes) -> None:
        self.got.append((frame, asyncio.current_task() is None))
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self.arrived:
            self.arrived.notify_all()

    async def wait_for(self, count: int) -> None:
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: len(self.got) >= count), 10)

    async def run(self) -> None:
        pass

    def connection_lost(self) -> None:
        pass


class Probe(SessionConnection):
    """Counts the frames parsed, so a test can hold the session back until some have come."""

    frames = 0
    parsed: asyncio.Event | None = None

    def process_event(self, event: Event) -> None:
        super().process_event(event)
        if isinstance(event, Frame):
            self.frames += 1
            if self.parsed is not None:
                self.parsed.set()


@asynccontextmanager
async def server(
    handler: Callable[[SessionConnection], Awaitable[None]],
) -> AsyncIterator[str]:
    async def handle(connection: ServerConnection) -> None:
        assert isinstance(connection, SessionConnection)
        await handler(connection)

    async with serve(handle, "127.0.0.1", 0, create_connection=Probe, compression=None) as srv:
        port = srv.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


def feeding(session: Recorder, closed: list[int | None]) -> Callable[..., Awaitable[None]]:
    async def handler(connection: SessionConnection) -> None:
        with suppress(ConnectionClosed):
            await connection.feed(session)
        closed.append(connection.close_code)

    return handler


def test_the_pinned_websockets_still_has_the_hook() -> None:
    assert websockets.__version__.startswith("17.4")
    assert "process_event" in vars(ServerConnection)


def test_complete_text_frames_go_straight_to_the_session() -> None:
    async def scenario() -> None:
        session, closed = Recorder(), []
        async with server(feeding(session, closed)) as url, connect(url) as client:
            for text in ("one", "two", "three"):
                await client.send(text)
            await session.wait_for(3)
        assert session.got == [("one", True), ("two", True), ("three", True)]

    asyncio.run(scenario())


def test_fragmented_binary_and_early_messages_keep_their_order() -> None:
    async def scenario() -> None:
        session, closed = Recorder(), []
        both_parsed = asyncio.Event()

        async def handler(connection: SessionConnection) -> None:
            assert isinstance(connection, Probe)
            # Two messages arrive before the session is attached: they wait in websockets'
            # reader, and the ones after them queue behind.
            while connection.frames < 2:
                connection.parsed = asyncio.Event()
                await asyncio.wait_for(connection.parsed.wait(), 10)
            both_parsed.set()
            await feeding(session, closed)(connection)

        async with server(handler) as url, connect(url) as client:
            await client.send("early 1")
            await client.send("early 2")
            await asyncio.wait_for(both_parsed.wait(), 10)
            await client.send(["frag", "mented"])
            await client.send(b"\x00binary")
            await client.send("direct")
            await session.wait_for(5)
        assert [message for message, _ in session.got] == [
            "early 1",
            "early 2",
            "fragmented",
            b"\x00binary",
            "direct",
        ]
        assert not any(straight for _, straight in session.got[:4])

    asyncio.run(scenario())


def test_a_text_frame_of_invalid_utf8_closes_with_1007() -> None:
    async def scenario() -> None:
        session, closed = Recorder(), []
        async with server(feeding(session, closed)) as url, connect(url) as client:
            await client.send("fine")
            await client.send(b"\xff\xfe", text=True)
            await asyncio.wait_for(client.wait_closed(), 10)
        assert session.got == [("fine", True)]
        assert client.close_code == CloseCode.INVALID_DATA
        assert len(closed) == 1  # the reader ended: the transport ends the session

    asyncio.run(scenario())


def test_send_now_writes_at_once_and_refuses_a_full_buffer_or_a_closed_connection() -> None:
    async def scenario() -> None:
        outcome: list[bool] = []
        written = asyncio.Event()

        async def handler(connection: SessionConnection) -> None:
            channel = SessionChannel(connection)
            outcome.append(channel.send_now("hello"))
            # The client stops reading: the kernel's buffers fill, then the transport's.
            frame = "x" * 256 * 1024
            for _ in range(400):
                if not channel.send_now(frame):
                    break
            outcome.append(connection.transport.get_write_buffer_size() > 0)
            written.set()
            await connection.wait_closed()
            outcome.append(channel.send_now("late"))

        async with server(handler) as url:
            client: ClientConnection = await connect(url, max_queue=1, max_size=None)
            assert await asyncio.wait_for(client.recv(), 10) == "hello"
            await asyncio.wait_for(written.wait(), 30)
            client.transport.abort()
            await asyncio.wait_for(client.wait_closed(), 10)
        assert outcome == [True, True, False]

    asyncio.run(scenario())


def test_frames_of_one_loop_iteration_reach_the_socket_in_one_write() -> None:
    async def scenario() -> None:
        writes: list[int] = []
        sent = asyncio.Event()

        async def handler(connection: SessionConnection) -> None:
            transport = connection.transport
            write = transport.write

            def counting(data: bytes | bytearray | memoryview) -> None:
                writes.append(len(data))
                write(data)

            transport.write = counting  # type: ignore[method-assign]
            channel = SessionChannel(connection)
            assert all(channel.send_now(f"frame {index}") for index in range(20))
            await asyncio.sleep(0)  # the end of the iteration
            assert channel.send_now("after")
            await asyncio.sleep(0)
            writes.append(-1)  # the frames' writes end here (the closing handshake follows)
            sent.set()
            await connection.wait_closed()

        async with server(handler) as url, connect(url) as client:
            got = [await asyncio.wait_for(client.recv(), 10) for _ in range(21)]
            await asyncio.wait_for(sent.wait(), 10)
        assert got == [f"frame {index}" for index in range(20)] + ["after"]
        assert len(writes[: writes.index(-1)]) == 2, writes

    asyncio.run(scenario())


def test_a_frame_for_three_subscribers_is_encoded_once(monkeypatch: Any) -> None:
    encodings: list[str] = []
    original = connection_module.encode

    def counting(text: str) -> bytes:
        encodings.append(text)
        return original(text)

    monkeypatch.setattr(connection_module, "encode", counting)

    async def scenario() -> None:
        channels: list[SessionChannel] = []
        ready = asyncio.Event()

        async def handler(connection: SessionConnection) -> None:
            channels.append(SessionChannel(connection))
            if len(channels) == 3:
                ready.set()
            await connection.wait_closed()

        async with server(handler) as url:
            clients = [await connect(url) for _ in range(3)]
            await asyncio.wait_for(ready.wait(), 10)
            frame = '{"jsonrpc":"2.0","method":"agent.event","params":{"text":"é"}}'
            assert all(channel.send_now(frame) for channel in channels)
            other = "another frame"
            assert all(channel.send_now(other) for channel in channels)
            for client in clients:
                assert await asyncio.wait_for(client.recv(), 10) == frame
                assert await asyncio.wait_for(client.recv(), 10) == other
                await client.close()
        assert encodings == [frame, other]

    asyncio.run(scenario())


def test_a_large_burst_is_written_at_once_past_the_tick_bound() -> None:
    # What a connection holds until the end of an iteration is bounded in bytes.
    async def scenario() -> None:
        held: list[int] = []

        async def handler(connection: SessionConnection) -> None:
            channel = SessionChannel(connection)
            frame = "y" * 1024
            count = connection_module.TICK_BYTES // 1024
            sent = 0
            for _ in range(count * 3):
                if not channel.send_now(frame):
                    break
                sent += 1
            writer = connection_module.tick_writer(asyncio.get_running_loop())
            held.append(sum(len(f) for f in writer._pending.get(connection, [])))
            held.append(sent)
            await connection.wait_closed()

        async with server(handler) as url, connect(url, max_size=None) as client:
            await asyncio.wait_for(client.recv(), 10)
        assert held[0] < connection_module.TICK_BYTES

    asyncio.run(scenario())
