"""A channel that can write without awaiting (``ImmediateChannel``) gets every frame that finds
nothing queued at once, and nothing out of order: once a frame is queued, later ones queue
behind it, with the usual bounds."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from paseo_hookspecs.transport import ImmediateChannel, Observed, SessionLimits
from unit.rpc.harness import SessionHost

from paseo.daemon.methods import ping
from paseo.rpc.dispatch import MethodTable
from paseo.rpc.models import PingParams, PingResult
from paseo.rpc.session import CLOSE_SLOW_CONSUMER, Session


def ping_frame(request_id: int) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "server.ping", "params": {"data": "x"}}
    )


class Socket:
    """A connection whose buffer takes frames at once until ``full``; then only awaited sends
    go through, once the client reads (``release``)."""

    def __init__(self) -> None:
        self.wire: list[tuple[str, dict[str, Any]]] = []
        """Every frame written, with how: ``now`` or ``awaited``."""
        self.full = False
        self.closed_with: list[int] = []
        self._release = asyncio.Event()

    def send_now(self, text: str) -> bool:
        if self.full:
            return False
        self.wire.append(("now", json.loads(text)))
        return True

    async def send(self, text: str) -> None:
        await self._release.wait()
        self.wire.append(("awaited", json.loads(text)))

    async def close(self, code: int, reason: str) -> None:
        self.closed_with.append(code)
        self._release.set()

    def release(self) -> None:
        self.full = False
        self._release.set()


def session_on(
    channel: Socket, limits: SessionLimits | None = None, host: SessionHost | None = None
) -> Session:
    session = Session(
        host or SessionHost(),
        kind="local",
        channel=channel,
        observed=Observed(
            transport="unix", unix_socket=True, peer=None, client_address=None, origin=None
        ),
        limits=limits or SessionLimits(),
    )
    session.mark_hello("immediate-test", "test")
    return session


def test_the_socket_protocol_is_an_immediate_channel() -> None:
    assert isinstance(Socket(), ImmediateChannel)


def test_answers_and_notifications_are_written_at_once_when_nothing_is_queued() -> None:
    async def scenario() -> None:
        channel = Socket()
        session = session_on(channel)
        runner = asyncio.get_running_loop().create_task(session.run())
        session.receive(ping_frame(1))
        session.deliver("agents", '{"jsonrpc":"2.0","method":"agent.update","params":{}}')
        session.push("server.note", {"text": "hi"})
        assert [how for how, _ in channel.wire] == ["now", "now", "now"]
        assert channel.wire[0][1]["id"] == 1
        assert channel.wire[2][1]["params"]["seq"] == 1
        assert session.queued_bytes == 0
        session.connection_lost()
        await runner

    asyncio.run(scenario())


def test_once_a_frame_waits_the_later_ones_queue_behind_it_in_order() -> None:
    async def scenario() -> None:
        channel = Socket()
        session = session_on(channel)
        runner = asyncio.get_running_loop().create_task(session.run())
        session.receive(ping_frame(1))
        channel.full = True
        session.receive(ping_frame(2))  # queued: its call task awaits the send
        channel.full = False  # the socket would take one now, but frame 2 is still waiting
        session.receive(ping_frame(3))
        session.deliver("agents", '{"jsonrpc":"2.0","method":"agent.update","params":{}}')
        assert [how for how, _ in channel.wire] == ["now"]
        assert session.queued_bytes > 0
        channel.release()
        session.close(1000, "done")
        await asyncio.wait_for(runner, 10)
        assert [(how, frame.get("id")) for how, frame in channel.wire] == [
            ("now", 1),
            ("awaited", 2),
            ("awaited", 3),
            ("awaited", None),
        ]
        assert session.queued_bytes == 0

    asyncio.run(scenario())


def test_a_client_that_stops_reading_still_meets_the_queue_bound() -> None:
    async def scenario() -> None:
        channel = Socket()
        session = session_on(channel, SessionLimits(outbound_queue=4))
        runner = asyncio.get_running_loop().create_task(session.run())
        channel.full = True
        for _seq in range(12):
            session.deliver("agents", json.dumps({"jsonrpc": "2.0", "method": "t", "params": {}}))
        # Overflowed twice (a resync notice, then the close): nothing reached the socket at once.
        await asyncio.wait_for(runner, 10)
        assert channel.closed_with == [CLOSE_SLOW_CONSUMER]
        assert channel.wire == []
        assert session.queued_bytes == 0

    asyncio.run(scenario())


async def waits_a_turn(ctx: Any, params: None) -> dict[str, str]:
    # Declared immediate but suspends: it must still be answered, from a task.
    await asyncio.sleep(0)
    return {"late": "yes"}


def immediate_session(channel: Socket) -> Session:
    host = SessionHost()
    host.methods = table = MethodTable()
    table.add_group(
        RpcMethodGroup(
            "server",
            [
                RpcMethod("server.ping", ping, PingParams, PingResult, immediate=True),
                RpcMethod("server.turn", waits_a_turn, immediate=True),
            ],
        ),
        "kernel",
    )
    return session_on(channel, host=host)


def test_an_immediate_method_is_answered_inline_without_a_call_task() -> None:
    async def scenario() -> None:
        channel = Socket()
        session = immediate_session(channel)
        runner = asyncio.get_running_loop().create_task(session.run())
        session.receive(ping_frame(1))
        assert session.in_flight == 0
        assert [(how, frame["id"]) for how, frame in channel.wire] == [("now", 1)]
        # A socket that does not take it now: queued, and written by the writer task.
        channel.full = True
        session.receive(ping_frame(2))
        assert session.in_flight == 0
        assert session.queued_bytes > 0
        channel.release()
        session.close(1000, "done")
        await asyncio.wait_for(runner, 10)
        assert [(how, frame["id"]) for how, frame in channel.wire] == [("now", 1), ("awaited", 2)]

    asyncio.run(scenario())


def test_an_immediate_method_that_suspends_is_still_answered() -> None:
    async def scenario() -> None:
        channel = Socket()
        session = immediate_session(channel)
        runner = asyncio.get_running_loop().create_task(session.run())
        session.receive(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "server.turn"}))
        assert session.in_flight == 1
        await asyncio.wait_for(session.drain_calls(), 10)
        assert [frame for _, frame in channel.wire] == [
            {"jsonrpc": "2.0", "id": 7, "result": {"late": "yes"}}
        ]
        session.connection_lost()
        await runner

    asyncio.run(scenario())
