"""Schedules against the real daemon with scripted agents: a schedule whose target agent was
deleted is paused saying so, and the agent's restore resumes it (issue 27, 6h); the cap on
schedule runs in flight at once (6f)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from paseo_hookspecs.errors import Conflict

from paseo.schedules.service import TARGET_DELETED

HOURLY = {"type": "every", "everyMs": 3_600_000}


def _schedule(client: Any, schedule_id: str) -> dict[str, Any]:
    record: dict[str, Any] = client.call("schedule.inspect", {"scheduleId": schedule_id})[
        "schedule"
    ]
    return record


def test_a_schedule_whose_target_was_deleted_is_paused_and_resumed_by_the_restore(
    client: Any, create_agent: Callable[..., dict[str, Any]], run_paseo: Any, paseo_home: Path
) -> None:
    agent = create_agent(initialPrompt="hello", title="target")
    client.call("agent.wait", {"agentId": agent["id"], "timeout": 20}, timeout=30)
    schedule = client.call(
        "schedule.create",
        {"prompt": "again", "cadence": HOURLY, "target": {"type": "agent", "agentId": "target"}},
    )["schedule"]
    client.call("agent.delete", {"agentId": agent["id"]})
    client.call("schedule.run-now", {"scheduleId": schedule["id"]})
    wait_for(
        lambda: _schedule(client, schedule["id"])["status"] == "paused",
        what="the schedule paused after its run failed",
    )
    paused = _schedule(client, schedule["id"])
    assert paused["runs"][-1]["status"] == "failed"
    assert paused["pausedReason"] == TARGET_DELETED
    assert paused["nextRunAt"] is None
    shown = run_paseo(
        "schedule", "inspect", schedule["id"], env={"PASEO_HOME": str(paseo_home)}, check=True
    )
    assert "target agent was deleted" in shown.stdout

    client.call("trash.restore", {"agentId": agent["id"]})
    resumed = _schedule(client, schedule["id"])
    assert resumed["status"] == "active"
    assert resumed["nextRunAt"] is not None
    assert resumed.get("pausedReason") is None


@pytest.fixture
def capped_daemon(agent_daemon_factory: Callable[..., LiveDaemon]) -> LiveDaemon:
    return agent_daemon_factory(env={"PASEO_SCHEDULE_MAX_CONCURRENT": "1"})


def test_schedule_runs_in_flight_are_capped(capped_daemon: LiveDaemon, workdir: Path) -> None:
    from paseo.client import SyncClient

    target = {"type": "new-agent", "config": {"cwd": str(workdir), "provider": "scripted"}}
    with SyncClient(home=capped_daemon.home, client_type="sdk") as client:
        slow, other = (
            client.call(
                "schedule.create", {"prompt": "[[slow:60]]", "cadence": HOURLY, "target": target}
            )["schedule"]
            for _ in range(2)
        )
        client.call("schedule.run-now", {"scheduleId": slow["id"]})
        with pytest.raises(Conflict, match="in progress"):  # the overlap rule
            client.call("schedule.run-now", {"scheduleId": slow["id"]})
        with pytest.raises(Conflict, match="the most allowed at once"):
            client.call("schedule.run-now", {"scheduleId": other["id"]})
        assert _schedule(client, other["id"])["runs"] == []
        # Deleting the schedule ends its run: the cap is free again.
        client.call("schedule.delete", {"scheduleId": slow["id"]})
        client.call("schedule.run-now", {"scheduleId": other["id"]})
