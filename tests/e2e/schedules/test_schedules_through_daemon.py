"""Schedules run by the real daemon with the real Claude Code against the fake model server,
driven through the real ``paseo schedule`` CLI.

A new-agent schedule every 2 s produces runs whose output is the agent's reply and whose
agents carry the schedule labels; an agent target prompts the existing agent; a daemon killed
with SIGKILL during a run fails that run at the next boot ("daemon restarted"), skips the
slots it missed and runs the next one on its slot.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

RUNS_TIMEOUT = TURN_TIMEOUT * 3


def start(daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path) -> Path:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    # Runs every few seconds, under the one-minute minimum a user's schedule has.
    daemon.env["PASEO_SCHEDULE_MIN_INTERVAL"] = "1"
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    return work


def runs(daemon: RealDaemon, schedule_id: str) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = json.loads(
        daemon.cli("schedule", "logs", schedule_id, "-o", "json").stdout
    )
    return history


def inspect(daemon: RealDaemon, schedule_id: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(
        daemon.cli("schedule", "inspect", schedule_id, "-o", "json").stdout
    )
    return record


def finished(daemon: RealDaemon, schedule_id: str, count: int) -> list[dict[str, Any]] | None:
    history = runs(daemon, schedule_id)
    done = [run for run in history if run["status"] != "running"]
    return history if len(done) >= count else None


def test_a_new_agent_schedule_runs_labelled_agents_and_records_their_replies(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    created = json.loads(
        daemon.cli(
            "schedule",
            "create",
            "[[reply:scheduled hello]]",
            "--every",
            "2s",
            "--provider",
            "claude",
            "--cwd",
            str(work),
            "--max-runs",
            "2",
            "--name",
            "greeter",
            "-o",
            "json",
        ).stdout
    )
    schedule_id = created["id"]
    assert created["target"]["type"] == "new-agent"
    assert created["nextRunAt"] is not None

    history = poll(
        lambda: finished(daemon, schedule_id, 2), timeout=RUNS_TIMEOUT, what="two finished runs"
    )
    assert [run["status"] for run in history] == ["succeeded", "succeeded"]
    assert [run["output"] for run in history] == ["scheduled hello", "scheduled hello"]
    assert inspect(daemon, "greeter")["status"] == "completed"

    agents = {a["id"]: a for a in json.loads(daemon.cli("ls", "-a", "-o", "json").stdout)}
    for run in history:
        labels = agents[run["agentId"]]["labels"]
        assert labels["paseo.schedule-id"] == schedule_id
        assert labels["paseo.schedule-run"] == run["id"]
        assert agents[run["agentId"]]["cwd"] == str(work)
    table = daemon.cli("schedule", "ls").stdout
    assert "greeter" in table
    assert "completed" in table


def test_an_agent_target_prompts_the_existing_agent(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    ran = daemon.cli(
        "run",
        "--provider",
        "claude",
        "--cwd",
        str(work),
        "--title",
        "main",
        "--wait-timeout",
        f"{TURN_TIMEOUT:.0f}s",
        "[[reply:first turn]]",
    )
    assert ran.stdout == "first turn\n"
    agent_id = json.loads(daemon.cli("inspect", "main", "-o", "json").stdout)["agent"]["id"]
    created = json.loads(
        daemon.cli(
            "schedule",
            "create",
            "[[reply:from the schedule]]",
            "--every",
            "2s",
            "--target",
            "main",
            "--max-runs",
            "1",
            "-o",
            "json",
        ).stdout
    )
    assert created["target"] == {"type": "agent", "agentId": agent_id}

    (only,) = poll(
        lambda: finished(daemon, created["id"], 1), timeout=RUNS_TIMEOUT, what="the run"
    )
    assert (only["status"], only["agentId"], only["output"]) == (
        "succeeded",
        agent_id,
        "from the schedule",
    )
    assert len(json.loads(daemon.cli("ls", "-o", "json").stdout)) == 1


def test_a_run_cut_by_a_daemon_crash_fails_and_the_next_slot_runs(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    # Each run streams for about 6 s (chunk 1 to chunk 30, 0.2 s apart: a reply text shorter
    # than 30 pieces would stream fewer), so the crash lands in the middle of one.
    created = json.loads(
        daemon.cli(
            "schedule",
            "create",
            "[[slow:30:0.2]]",
            "--every",
            "3s",
            "--provider",
            "claude",
            "--cwd",
            str(work),
            "-o",
            "json",
        ).stdout
    )
    schedule_id = created["id"]

    def working() -> dict[str, Any] | None:
        history = runs(daemon, schedule_id)
        if history and history[-1]["status"] == "running" and history[-1]["agentId"]:
            return history[-1]
        return None

    cut = poll(working, timeout=RUNS_TIMEOUT, what="a run in progress")
    daemon.kill()
    restarted = datetime.now(UTC)
    daemon.start()

    history = runs(daemon, schedule_id)
    failed = next(run for run in history if run["id"] == cut["id"])
    assert (failed["status"], failed["error"]) == ("failed", "daemon restarted")

    def next_run() -> dict[str, Any] | None:
        later = [run for run in runs(daemon, schedule_id) if run["id"] != cut["id"]]
        later = [run for run in later if run["scheduledFor"] > cut["scheduledFor"]]
        return later[0] if later else None

    resumed = poll(next_run, timeout=RUNS_TIMEOUT, what="the first run after the restart")
    # On a slot of the cadence, and not one the dead daemon missed: those are skipped, never
    # replayed in a burst.
    scheduled = parse(resumed["scheduledFor"])
    assert scheduled > restarted
    assert (scheduled - parse(cut["scheduledFor"])) % timedelta(seconds=3) == timedelta(0)
    assert resumed["startedAt"] >= resumed["scheduledFor"]
    daemon.cli("schedule", "pause", schedule_id)


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
