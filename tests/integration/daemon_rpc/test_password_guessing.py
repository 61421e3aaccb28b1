"""Password attacks against the real daemon: the connection cap during authentication, and a
flood of wrong guesses next to a local client doing store writes."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon, hello, open_ws, rpc
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import InvalidStatus

PASSWORD = "correct horse"
ATTACKERS = 64


def _password_daemon(
    daemon_factory: Callable[..., LiveDaemon],
    run_paseo: Callable[..., Any],
    paseo_home: Path,
    settings: dict[str, Any] | None = None,
) -> LiveDaemon:
    run_paseo("daemon", "set-password", "--password-stdin", input=f"{PASSWORD}\n", check=True)
    config = json.loads((paseo_home / "config.json").read_text())
    if settings:
        config["plugins"] = {"websocket": {"settings": settings}}
    return daemon_factory(config)


async def _attempt(url: str, token: str, held: list[ClientConnection]) -> int:
    """The status of one upgrade (101 when admitted; admitted sockets stay open in ``held``)."""
    try:
        ws = await open_ws(url, token)
    except InvalidStatus as exc:
        return exc.response.status_code
    held.append(ws)
    return 101


def test_concurrent_password_logins_cannot_pass_the_cap(
    daemon_factory: Callable[..., LiveDaemon], run_paseo: Callable[..., Any], paseo_home: Path
) -> None:
    live = _password_daemon(daemon_factory, run_paseo, paseo_home, {"maxConnections": 3})

    async def run() -> Counter[int]:
        held: list[ClientConnection] = []
        try:
            statuses = await asyncio.gather(*(_attempt(live.url, PASSWORD, held) for _ in range(8)))
        finally:
            for ws in held:
                await ws.close()
        return Counter(statuses)

    statuses = asyncio.run(run())
    assert statuses[101] <= 3, statuses
    assert statuses[101] >= 1, statuses
    assert set(statuses) <= {101, 503}, statuses


async def _store_writes(ws: ClientConnection, tag: str, count: int, workdir: Path) -> list[float]:
    """Seconds per local store write: alternately ``label.create`` and ``workspace.open``."""
    took = []
    for i in range(count):
        started = time.perf_counter()
        if i % 2:
            directory = workdir / f"{tag}-{i}"
            directory.mkdir()
            reply = await rpc(ws, i + 1, "workspace.open", {"path": str(directory)})
        else:
            reply = await rpc(ws, i + 1, "label.create", {"name": f"{tag}-{i}", "color": "sky"})
        took.append(time.perf_counter() - started)
        assert "result" in reply, reply
    return took


FLOOD = Path(__file__).parents[2] / "helpers" / "password_flood.py"


def _flood(url: str) -> subprocess.Popen[str]:
    """The flood in its own process (it must load the daemon, not this measuring client);
    returns once every attacker was answered at least once."""
    flood = subprocess.Popen(
        [sys.executable, str(FLOOD), url, str(ATTACKERS), "120"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert flood.stdout is not None
    assert flood.stdout.readline().strip() == "started"
    return flood


def _stop_flood(flood: subprocess.Popen[str]) -> Counter[int]:
    out, _ = flood.communicate(input="", timeout=60)
    return Counter({int(status): count for status, count in json.loads(out).items()})


def test_a_wrong_password_flood_does_not_slow_a_local_client(
    daemon_factory: Callable[..., LiveDaemon],
    run_paseo: Callable[..., Any],
    paseo_home: Path,
    tmp_path: Path,
) -> None:
    live = _password_daemon(daemon_factory, run_paseo, paseo_home)

    async def run() -> tuple[list[float], list[float], Counter[int]]:
        ws = await open_ws(live.url, live.credential)
        await hello(ws)
        try:
            quiet = await _store_writes(ws, "quiet", 30, tmp_path)
            flood = await asyncio.to_thread(_flood, live.url)
            try:
                flooded = await _store_writes(ws, "flooded", 30, tmp_path)
            finally:
                statuses = await asyncio.to_thread(_stop_flood, flood)
            return quiet, flooded, statuses
        finally:
            await ws.close()

    quiet, flooded, statuses = asyncio.run(run())
    # Guessing was throttled, and the writes were not queued behind the hash checks: before
    # the fix their median was thousands of times the quiet one.
    assert statuses[429] > statuses[401], statuses
    assert set(statuses) <= {401, 429}, statuses
    assert statistics.median(flooded) < 20 * statistics.median(quiet), (quiet, flooded)
    log = (live.home / "daemon.log").read_text()
    assert log.count("wrong passwords from") == 1
