"""``schedule-failed`` through the real daemon: a scheduled run that fails reaches a sink that
asked for it, once, with the schedule's name and the run's error; a run that succeeds does not,
and a sink that did not ask hears nothing of either."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from integration.agents.conftest import scripted_config

HOURLY = {"type": "every", "everyMs": 3_600_000}
APPEND_STDIN = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read().strip() + '\\n')"


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _sink(name: str, out: Path, events: list[str]) -> dict[str, Any]:
    argv = [sys.executable, "-c", APPEND_STDIN, str(out)]
    return {"type": "command", "name": name, "argv": argv, "events": events}


def test_a_failed_scheduled_run_notifies_the_sinks_that_asked(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, tmp_path: Path
) -> None:
    from paseo.client import SyncClient

    wanted, other = tmp_path / "schedule-failed.jsonl", tmp_path / "finished.jsonl"
    sinks = [_sink("runs", wanted, ["schedule-failed"]), _sink("turns", other, ["permission"])]
    daemon = agent_daemon_factory(scripted_config({"daemon": {"notifications": sinks}}))
    target = {"type": "new-agent", "config": {"cwd": str(workdir), "provider": "scripted"}}
    with SyncClient(home=daemon.home, client_type="sdk") as client:

        def run_and_wait(prompt: str, name: str) -> dict[str, Any]:
            created = client.call(
                "schedule.create",
                {"prompt": prompt, "name": name, "cadence": HOURLY, "target": target},
            )["schedule"]
            client.call("schedule.run-now", {"scheduleId": created["id"]})

            def ended() -> dict[str, Any] | None:
                record = client.call("schedule.inspect", {"scheduleId": created["id"]})
                runs = record["schedule"]["runs"]
                return runs[-1] if runs and runs[-1].get("endedAt") else None

            run: dict[str, Any] = wait_for(ended, timeout=30, what=f"the run of {name}")
            run["scheduleId"] = created["id"]
            return run

        good = run_and_wait("[[reply:all green]]", "nightly-ok")
        assert good["status"] == "succeeded"
        bad = run_and_wait("[[fail:the build broke]]", "nightly-build")
        assert bad["status"] == "failed"

    got = wait_for(lambda: _lines(wanted) or None, timeout=30, what="the schedule-failed notice")
    assert len(got) == 1, got  # the succeeded run sent nothing
    notice = got[0]
    assert notice["event"] == notice["reason"] == "schedule-failed"
    assert notice["reasonText"] == "A scheduled run failed"
    assert notice["title"] == "nightly-build"
    assert notice["scheduleId"] == bad["scheduleId"]
    assert notice["runId"] == bad["id"]
    assert notice["agentId"] == bad["agentId"]
    assert "the build broke" in notice["summary"]
    assert notice["serverId"]
    assert not _lines(other)  # that sink asked only for permission requests
