"""An output flood with a subscriber that never reads: the daemon's memory stays bounded and
other clients keep being answered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import psutil
from helpers.daemon_rpc import hello, open_ws, rpc
from integration.terminals.support import Terminals

FLOOD = {
    "id": "flood",
    "name": "Flood",
    "command": "sh",
    "args": ["-c", "cat /dev/urandom | base64"],
}

FLOOD_BYTES = 3 * 1024 * 1024
"""Output the test waits for: twelve times the pending-output bound of a terminal, and far
more than the stalled connection's socket buffers hold."""

RSS_GROWTH_LIMIT = 96 * 1024 * 1024
"""Allowed daemon RSS growth while flooding: the bounded per-connection frame queue of the
stalled subscriber plus the screen model, not the output volume."""


async def _stalled_subscriber(url: str, token: str, terminal_id: str) -> object:
    ws = await open_ws(url, token, max_queue=1)
    await hello(ws, "stalled")
    reply = await rpc(ws, 1, "terminal.subscribe", {"terminalId": terminal_id})
    assert "result" in reply, reply
    # From here on nothing is read: the socket fills and the server must cope.
    return ws


def test_a_flood_keeps_memory_bounded_and_other_clients_answered(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path
) -> None:
    t = terminal_daemon({"daemon": {"terminalProfiles": [FLOOD]}})
    daemon = psutil.Process(t.daemon.pid)
    loop = asyncio.new_event_loop()
    try:
        terminal_id = t.create(cwd=str(tmp_path), profileId="flood")["terminalId"]
        ws = loop.run_until_complete(
            _stalled_subscriber(t.daemon.url, t.daemon.credential, terminal_id)
        )
        baseline = daemon.memory_info().rss
        peak = baseline
        answered = 0
        while t.info(terminal_id)["outputBytes"] < FLOOD_BYTES:
            # Another client is answered all along (each call is bounded by its timeout).
            assert t.client.call("server.ping", {"data": "still there"}, timeout=30)["data"]
            listed = t.client.call("terminal.list", {}, timeout=30)
            assert [x["terminalId"] for x in listed["terminals"]] == [terminal_id]
            answered += 1
            peak = max(peak, daemon.memory_info().rss)
        assert answered > 0
        assert peak - baseline < RSS_GROWTH_LIMIT, (baseline, peak)
        # The screen model kept up with everything that was read.
        tail = t.lines(terminal_id, start=-3)
        assert tail
        assert all(json.dumps(line).isascii() for line in tail)
        t.call("terminal.kill", {"terminalId": terminal_id})
        loop.run_until_complete(ws.close())  # type: ignore[attr-defined]
    finally:
        loop.close()
