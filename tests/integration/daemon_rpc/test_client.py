"""``paseo.client`` against the real daemon."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, start_daemon, stop_daemon
from paseo_hookspecs.errors import AccessDenied, InvalidParams, NotFound

from paseo.client import PaseoClient, SyncClient
from paseo.rpc.errors import ConnectionLost, DaemonNotRunning, MethodNotFound
from paseo.rpc.models import StatusResult


def test_sync_client_typed_results_and_errors(daemon: LiveDaemon) -> None:
    with SyncClient(home=daemon.home, client_type="cli") as client:
        assert client.hello.sessionKind == "local"
        status = client.status()
        assert isinstance(status, StatusResult)
        assert status.pid == daemon.pid
        assert status.counts.connections == 1
        assert client.ping("hi").data == "hi"
        with pytest.raises(MethodNotFound):
            client.call("no.such")
        with pytest.raises(InvalidParams) as info:
            client.call("server.ping", {"data": 3})
        assert info.value.data["errors"][0]["path"] == "data"
        with pytest.raises(NotFound):
            client.subscribe(["no-such-stream"])
        with pytest.raises(AccessDenied):
            client.config_patch({"daemon": {"auth": {"password": "x"}}})


def test_notifications_carry_stream_sequence_numbers(daemon: LiveDaemon) -> None:
    received: list[dict[str, Any]] = []
    arrived = threading.Event()

    def on_change(method: str, params: dict[str, Any]) -> None:
        received.append(params)
        if len(received) == 2:
            arrived.set()

    with SyncClient(home=daemon.home) as client:
        client.on("config.changed", on_change)
        position = client.subscribe(["config"]).streams[0]
        assert position.seq == 0
        first = client.config_patch({"daemon": {"git": {"maxProcessesPerSecond": 10}}})
        assert first.applied == ["daemon.git.maxProcessesPerSecond"]
        # The new home's config.json (written at its first start, the relay off) and the patch.
        assert first.config == {
            "version": 1,
            "daemon": {"relay": {"enabled": False}, "git": {"maxProcessesPerSecond": 10}},
        }
        client.config_patch({"daemon": {"appendSystemPrompt": "be brief"}})
        assert arrived.wait(10)
    assert [p["seq"] for p in received] == [1, 2]
    assert {p["stream"] for p in received} == {"config"}
    assert received[1]["applied"] == ["daemon.appendSystemPrompt"]


def test_config_get_redacts_the_password(daemon: LiveDaemon, run_paseo) -> None:
    run_paseo("daemon", "set-password", "--password-stdin", input="a-long-password\n", check=True)
    with SyncClient(home=daemon.home) as client:
        client.config_reload()
        got = client.config_get("daemon.auth.password")
    assert got.config == "********"
    assert got.resolved == "********"


def test_not_running_error_says_how_to_start(paseo_home: Path) -> None:
    async def run() -> None:
        await PaseoClient(home=paseo_home, reconnect=False).connect()

    with pytest.raises(DaemonNotRunning, match="paseo daemon start"):
        asyncio.run(run())


def test_client_reconnects_after_a_restart(paseo_home: Path) -> None:
    first = start_daemon(paseo_home)
    try:

        async def run() -> tuple[int, list[str]]:
            gaps: list[str] = []
            client = PaseoClient(home=paseo_home, max_backoff=0.5)
            client.on_gap(lambda stream, expected, got: gaps.append(stream))
            await client.connect()
            await client.subscribe(["config"])
            await asyncio.to_thread(stop_daemon, paseo_home)
            second = await asyncio.to_thread(start_daemon, paseo_home)
            # Bounded by the client's request timeout: the call waits for the reconnect.
            status = await client.call("server.status", result=StatusResult, timeout=30)
            assert status.pid == second.pid
            await client.close()
            return status.pid, gaps

        pid, gaps = asyncio.run(run())
        assert pid != first.pid
        assert gaps == ["config"]  # the reconnect is reported as a gap on subscribed streams
    finally:
        stop_daemon(paseo_home)


def test_a_bounded_client_gives_up_when_the_daemon_stays_away(paseo_home: Path) -> None:
    start_daemon(paseo_home)
    try:

        async def run() -> tuple[list[tuple[int, int | None]], bool]:
            said: list[tuple[int, int | None]] = []
            client = PaseoClient(
                home=paseo_home,
                max_backoff=0.2,
                max_reconnects=3,
                on_reconnecting=lambda attempt, limit: said.append((attempt, limit)),
            )
            await client.connect()
            await asyncio.to_thread(stop_daemon, paseo_home)
            async with asyncio.timeout(30):
                while not client.lost:  # noqa: ASYNC110 - a property, not an event
                    await asyncio.sleep(0.05)
            with pytest.raises(ConnectionLost):
                await client.call("server.status", timeout=5)
            await client.close()
            return said, client.lost

        said, lost = asyncio.run(run())
        assert said == [(1, 3), (2, 3), (3, 3)]
        assert lost
    finally:
        stop_daemon(paseo_home)
