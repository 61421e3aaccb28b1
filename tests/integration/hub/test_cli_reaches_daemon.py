"""``paseo hub`` reaches the real daemon: the plugin's caller finds it the way the kernel's
client does (the pid file's listen address, the local credential) and gets RPC errors with
their codes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon
from paseo_hookspecs.cli_client import RemoteError, WebSocketCaller
from paseo_hookspecs.errors import Unavailable


@pytest.fixture
def daemon(paseo_home: Path) -> Iterator[LiveDaemon]:
    paseo_home.mkdir(parents=True, exist_ok=True)
    live = start_daemon(paseo_home)
    try:
        yield live
    finally:
        stop_daemon(live.home)
        kill_leftover(live.pid)


def call(home: Path, method: str) -> dict[str, object]:
    async def body() -> dict[str, object]:
        async with asyncio.timeout(30):
            return await WebSocketCaller(str(home)).call(method, {})

    return asyncio.run(body())


def test_the_caller_discovers_and_authenticates_like_the_cli(daemon: LiveDaemon) -> None:
    assert isinstance(call(daemon.home, "server.ping"), dict)


def test_daemon_errors_keep_their_code(daemon: LiveDaemon) -> None:
    with pytest.raises(RemoteError) as missing:
        call(daemon.home, "no.such.method")
    assert missing.value.code == "method_not_found"


def test_a_stopped_daemon_is_reported_as_unavailable(paseo_home: Path) -> None:
    paseo_home.mkdir(parents=True, exist_ok=True)
    (paseo_home / "config.json").write_text('{"daemon": {"listen": "127.0.0.1:9"}}')
    with pytest.raises(Unavailable, match="not running"):
        call(paseo_home, "server.ping")


def test_the_hub_group_is_listed(run_paseo) -> None:
    result = run_paseo("hub", "--help", check=True)
    for command in ("connect", "status", "disconnect"):
        assert command in result.stdout
