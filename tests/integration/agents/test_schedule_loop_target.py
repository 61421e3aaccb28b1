"""Loops as a schedule target (the loops plugin's ``loop``, offered through
``paseo_register_schedule_targets``) on a real daemon with the scripted provider: each fire
starts a loop, and the run lasts until the loop has ended."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from paseo_hookspecs.errors import PaseoError

WEEKLY = {"type": "cron", "expression": "0 9 * * 1"}


def test_a_schedule_fire_starts_a_loop_and_its_run_lasts_the_loop(
    agent_daemon: LiveDaemon, client: Any, workdir: Path
) -> None:
    config = {
        "cwd": str(workdir),
        "provider": "scripted",
        "verifyChecks": ["test -f done.txt"],
        "maxIterations": 1,
    }
    (workdir / "done.txt").write_text("x")
    schedule = client.call(
        "schedule.create",
        {"prompt": "tidy up", "cadence": WEEKLY, "target": {"type": "loop", "config": config}},
    )["schedule"]
    assert schedule["target"]["type"] == "loop"
    assert schedule["target"]["config"]["cwd"] == str(workdir)
    client.call("schedule.run-now", {"scheduleId": schedule["id"]})

    def ended() -> dict[str, Any] | None:
        runs = client.call("schedule.logs", {"scheduleId": schedule["id"]})["runs"]
        return runs[-1] if runs and runs[-1]["status"] != "running" else None

    run = wait_for(ended, timeout=90, what="the schedule's run")
    assert run["status"] == "succeeded", run
    (loop,) = client.call("loop.list", {})["loops"]
    assert run["output"].startswith(f"loop {loop['id']} succeeded")
    record = client.call("loop.inspect", {"id": loop["id"]})["loop"]
    assert record["prompt"] == "tidy up"
    assert record["agentLabels"]["paseo.schedule-id"] == schedule["id"]
    worker = client.call("agent.get", {"agentId": record["iterations"][0]["workerAgentId"]})
    assert worker["agent"]["labels"]["paseo.schedule-id"] == schedule["id"]
    assert worker["agent"]["labels"]["paseo.loop-id"] == loop["id"]


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ({"type": "loop", "config": {"cwd": "relative", "verifyPrompt": "v"}}, "absolute"),
        ({"type": "loop", "config": {"cwd": "/"}}, "--verify"),
        ({"type": "loop", "config": {"cwd": "/", "verifyPrompt": "v", "bogus": 1}}, "bogus"),
        ({"type": "loop", "config": {"verifyPrompt": "v"}}, "cwd"),
        ({"type": "nothing", "config": {}}, "no loaded plugin offers"),
    ],
)
def test_a_loop_target_is_checked_when_the_schedule_is_made(
    agent_daemon: LiveDaemon, client: Any, target: dict[str, Any], says: str
) -> None:
    with pytest.raises(PaseoError) as refused:
        client.call("schedule.create", {"prompt": "p", "cadence": WEEKLY, "target": target})
    assert refused.value.code == "invalid_params"
    assert says in refused.value.message
    assert client.call("schedule.list", {})["schedules"] == []


def test_paseo_loop_schedule_makes_the_schedule(
    agent_daemon: LiveDaemon, client: Any, run_paseo: Any, workdir: Path
) -> None:
    made = run_paseo(
        *("loop", "schedule", "keep it green", "--cron", "0 9 * * 1", "--cwd", str(workdir)),
        *("--verify", "is it green?", "--max-iterations", "3", "-o", "json"),
        env={"PASEO_HOME": str(agent_daemon.home)},
        check=True,
    )
    schedule = json.loads(made.stdout)
    assert schedule["prompt"] == "keep it green"
    assert schedule["target"]["type"] == "loop"
    config = schedule["target"]["config"]
    assert (config["cwd"], config["verifyPrompt"], config["maxIterations"]) == (
        str(workdir),
        "is it green?",
        3,
    )
    both = run_paseo(
        *("loop", "schedule", "x", "--cron", "0 9 * * 1", "--every", "1h", "--verify", "v"),
        env={"PASEO_HOME": str(agent_daemon.home)},
    )
    assert both.returncode == 2
    assert "Traceback" not in both.stderr
    shown = run_paseo("schedule", "ls", env={"PASEO_HOME": str(agent_daemon.home)}, check=True)
    assert f"loop in {workdir}" in shown.stdout
