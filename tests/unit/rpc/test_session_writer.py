"""Who writes a session's answers: the call that made one writes it at once when nothing else is
being written; a call blocked writing to a client that does not read is no call in flight."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paseo_hookspecs.transport import Observed, SessionLimits
from unit.rpc.harness import SessionHost

from paseo.rpc.session import Session


class Recorder:
    """A client that reads everything at once."""

    def __init__(self, *, blocked: bool = False) -> None:
        self.sent: list[dict[str, Any]] = []
        self.started = asyncio.Event()
        self._release = asyncio.Event()
        if not blocked:
            self._release.set()

    async def send(self, text: str) -> None:
        self.started.set()
        await self._release.wait()
        self.sent.append(json.loads(text))

    async def close(self, code: int, reason: str) -> None:
        self._release.set()


def session_on(channel: Recorder) -> Session:
    session = Session(
        SessionHost(),
        kind="local",
        channel=channel,
        observed=Observed(
            transport="unix", unix_socket=True, peer=None, client_address=None, origin=None
        ),
        limits=SessionLimits(),
    )
    session.mark_hello("writer-test", "test")
    return session


def ping_frame(request_id: int) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "server.ping", "params": {"data": "x"}}
    )


def test_a_call_that_waits_for_nothing_is_answered_before_receive_returns() -> None:
    async def scenario() -> None:
        channel = Recorder()
        session = session_on(channel)
        runner = asyncio.get_running_loop().create_task(session.run())
        for request_id in (1, 2, 3):
            session.receive(ping_frame(request_id))
            assert [a["id"] for a in channel.sent] == list(range(1, request_id + 1))
        assert all(a["result"]["data"] == "x" for a in channel.sent)
        session.connection_lost()
        await runner

    asyncio.run(scenario())


def test_answers_queued_behind_a_blocked_write_go_out_in_order() -> None:
    async def scenario() -> None:
        channel = Recorder(blocked=True)
        session = session_on(channel)
        runner = asyncio.get_running_loop().create_task(session.run())
        for request_id in range(1, 6):
            session.receive(ping_frame(request_id))
        await asyncio.wait_for(channel.started.wait(), 10)
        # The first answer's call task is stuck writing: that is not a call in flight, so
        # shutdown's drain does not wait for a client that does not read.
        await asyncio.wait_for(session.drain_calls(), 10)
        assert session.in_flight == 1
        assert session.queued_bytes > 0
        await channel.close(1000, "read now")
        session.close(1000, "done")
        await asyncio.wait_for(runner, 10)
        assert [a["id"] for a in channel.sent] == [1, 2, 3, 4, 5]

    asyncio.run(scenario())
