"""The outbound queues are bounded in bytes, per connection and across connections."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from paseo_hookspecs.transport import Observed, SessionLimits

from paseo.rpc.server import RpcServer
from paseo.rpc.session import CLOSE_SLOW_CONSUMER, Session

from .test_frames import _Daemon, _Recorder, _server

BIG = "x" * 100_000
"""One event of ~100 kB."""


def _session(server: RpcServer, channel: _Recorder, limits: SessionLimits) -> Session:
    session = Session(
        server,
        kind="local",
        channel=channel,
        observed=Observed("test", False, None, None, None),
        limits=limits,
    )
    session.subscriptions.add("config")
    server.sessions.add(session)
    return session


def test_a_connection_resyncs_at_its_byte_bound_then_closes(tmp_path: Path) -> None:
    async def run() -> tuple[RpcServer, _Recorder, list[int]]:
        server = _server(_Daemon(tmp_path))
        channel = _Recorder()
        limits = SessionLimits(outbound_bytes=350_000)
        session = _session(server, channel, limits)
        queued = []
        # The writer has not run: the client reads nothing.
        for _ in range(3):
            server.publish("config", "config.changed", {"data": BIG})
            queued.append(session.queued_bytes)
        server.publish("config", "config.changed", {"data": BIG})  # over: resync + this one
        queued.append(session.queued_bytes)
        for _ in range(3):  # over again before the notice was read: closed
            server.publish("config", "config.changed", {"data": BIG})
        queued.append(session.queued_bytes)
        async with asyncio.timeout(5):
            await channel.until(lambda: channel.closed is not None)
        session.connection_lost()
        return server, channel, queued

    server, channel, queued = asyncio.run(run())
    assert queued[0] < queued[1] < queued[2] <= 350_000
    assert queued[3] < 2 * len(BIG)  # the notice and the newest event
    assert queued[4] == 0
    assert channel.closed is not None
    assert channel.closed[0] == CLOSE_SLOW_CONSUMER
    assert server.outbound_bytes == 0


def test_the_total_bound_sheds_the_largest_queue_first(tmp_path: Path) -> None:
    async def run() -> tuple[list[str], list[str], int]:
        server = _server(_Daemon(tmp_path))
        limits = SessionLimits(outbound_bytes=10_000_000, outbound_bytes_total=500_000)
        hog_channel, small_channel = _Recorder(), _Recorder()
        hog = _session(server, hog_channel, limits)
        small = _session(server, small_channel, limits)
        small.subscriptions.discard("config")
        small.push("note", {"n": 1})
        for _ in range(6):  # only the hog is subscribed: it holds nearly everything
            server.publish("config", "config.changed", {"data": BIG})
        peak = server.outbound_bytes
        runners = [asyncio.get_running_loop().create_task(s.run()) for s in (hog, small)]
        async with asyncio.timeout(5):
            await hog_channel.until(lambda: len(hog_channel.sent) >= 2)
            await small_channel.until(lambda: len(small_channel.sent) >= 1)
        for session in (hog, small):
            session.connection_lost()
        await asyncio.gather(*runners)
        return hog_channel.sent, small_channel.sent, peak

    hog_sent, small_sent, peak = asyncio.run(run())
    assert peak <= 500_000
    assert json.loads(hog_sent[0])["method"] == "server.resync"
    assert [json.loads(text)["method"] for text in small_sent] == ["note"]
