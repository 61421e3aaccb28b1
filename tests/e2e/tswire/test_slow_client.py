"""A TypeScript client that stops reading is closed with 4008 ("Client too slow") once what
is held for it passes the session's outbound bound (8 MiB), against the real daemon: the
daemon keeps answering another client, and its memory does not follow what is pushed.

The ``scripted`` test agent echoes each prompt, so one 512 KiB prompt pushes about 1 MiB of
``agent_stream`` (the user message and the reply) to every client (each push stays under the
test client's 1 MiB frame limit).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon
from websockets.exceptions import ConnectionClosed

from paseo.testing.fake_model import RefusingProxy

pytestmark = pytest.mark.e2e

SCRIPTED_PLUGIN = Path(__file__).resolve().parents[2] / "integration" / "agents" / "scripted_agent"
PROMPT_BYTES = 512 << 10
TURNS = 64
"""About 64 MiB pushed per flood: eight times the 8 MiB of pushes held for a stalled client."""
SLOW_CLOSE = 4008


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def drain_until_closed(client: TsClient, bound: int = 100_000) -> ConnectionClosed:
    """Read frames until the connection closes (at most ``bound`` of them); the close."""
    for _ in range(bound):
        try:
            client.ws.recv(timeout=30)
        except ConnectionClosed as exc:
            return exc
    raise AssertionError(f"still open after {bound} frames")


def flood(
    driver: TsClient, agent_id: str, turns: range, until: Callable[[], bool] | None = None
) -> int:
    """Echoed prompts, each waited for (the driver reads and drops its pushes), until
    ``until`` holds after one; the turns taken."""
    text = "x" * PROMPT_BYTES
    for turn in turns:
        sent = driver.request(
            "send_agent_message_request",
            "send_agent_message_response",
            agentId=agent_id,
            text=f"{turn} {text}",
        )
        assert sent["accepted"] is True, sent
        done = driver.request(
            "wait_for_finish_request", "wait_for_finish_response", timeout=60, agentId=agent_id
        )
        assert done["status"] == "idle", done
        driver.frames.clear()
        if until is not None and until():
            return turn + 1 - turns.start
    return len(turns)


def test_a_client_that_stops_reading_is_closed_4008(tmp_path: Path, proxy: RefusingProxy) -> None:
    daemon = TsDaemon(tmp_path / "d", proxy)
    daemon.write_config(plugins={"scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)}})
    pid = daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    log = daemon.home / "daemon.log"

    def dropped() -> bool:
        return "cid_stalled does not read its pushes" in log.read_text()

    try:
        with TsClient(socket_path=daemon.socket_path) as driver:
            driver.hello("cid_driver")
            created = driver.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=60,
                config={"provider": "scripted", "cwd": str(work)},
                initialPrompt="warm up",
            )
            assert created["status"] == "agent_created", created
            agent_id = created["agent"]["id"]
            driver.request(
                "wait_for_finish_request", "wait_for_finish_response", timeout=60, agentId=agent_id
            )

            # The baseline, measured in the same run: the flood with only a reading client.
            start = rss_bytes(pid)
            flood(driver, agent_id, range(TURNS))
            baseline = rss_bytes(pid) - start

            with TsClient(socket_path=daemon.socket_path) as stalled:
                stalled.hello("cid_stalled")
                # From here ``stalled`` reads nothing: its socket and client buffers fill, then
                # the daemon holds its pushes, up to the bound.
                start = rss_bytes(pid)
                taken = flood(driver, agent_id, range(TURNS), until=dropped)
                assert dropped(), f"the stalled client was not dropped in {taken} turns"
                # It reads again at once (before the daemon gives up on the close handshake):
                # what was buffered, then the close.
                closed = drain_until_closed(stalled)
                assert closed.rcvd is not None
                assert (closed.rcvd.code, closed.rcvd.reason) == (SLOW_CLOSE, "Client too slow")
            # The same amount pushed as in the baseline.
            flood(driver, agent_id, range(taken, TURNS))
            stalling = rss_bytes(pid) - start

            # The daemon answers the other client as before.
            assert driver.request("ping", "pong")["__type"] == "pong"
            listed = driver.request(
                "fetch_agents_request", "fetch_agents_response", page={"limit": 10}
            )
            assert [e["agent"]["id"] for e in listed["entries"]] == [agent_id]
        # What the client that did not read cost is bounded (its 8 MiB of held pushes and its
        # timeline rows until the close), not what was pushed to it.
        pushed = TURNS * 2 * PROMPT_BYTES
        assert stalling - baseline < pushed // 2, (stalling, baseline, pushed)
    finally:
        daemon.cleanup()
