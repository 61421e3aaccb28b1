"""Usage accounting and budgets through the real daemon and the real ``paseo`` CLI, on both
store drivers, with the ``scripted`` provider reporting the usage each prompt asks for
(``[[usage:IN:OUT:COST]]``, ``-`` for a part it does not report)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, stop_daemon
from helpers.waiting import wait_for
from integration.agents.conftest import scripted_config

Run = Callable[..., subprocess.CompletedProcess[str]]


def _json(run: Run, home: Path, *args: str) -> Any:
    done = run(*args, "-o", "json", env={"PASEO_HOME": str(home)}, check=True)
    return json.loads(done.stdout)


def _cli(run: Run, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(*args, env={"PASEO_HOME": str(home)}, timeout=90)


@pytest.mark.parametrize("driver", ["json", "sqlite"])
def test_usage_totals_sources_and_unknown_cost_survive_a_restart(
    driver: str,
    agent_daemon_factory: Callable[..., LiveDaemon],
    run_paseo: Run,
    workdir: Path,
) -> None:
    config = scripted_config({"storage": {"driver": driver}})
    live = agent_daemon_factory(config)
    home = live.home
    run = ["run", "--provider", "scripted", "--cwd", str(workdir), "--wait-timeout", "30s"]
    # Titles with a letter outside hex: a title such as "b" is also a prefix of some ids, and
    # an id prefix is tried before a title (as in the TypeScript CLI).
    _cli(run_paseo, home, *run, "--title", "alpha", "[[usage:100:20:0.5]] one").check_returncode()
    _cli(run_paseo, home, "send", "--wait-timeout", "30s", "alpha", "[[usage:50:5:0.25]] two")
    scheduled = [*run, "--title", "bravo", "--label", "paseo.schedule-id=sched1"]
    _cli(run_paseo, home, *scheduled, "[[usage:10:1:-]] three").check_returncode()
    # A turn that reports nothing still counts as a turn, with unknown tokens and cost.
    _cli(run_paseo, home, "send", "--wait-timeout", "30s", "bravo", "four").check_returncode()
    ids = {t: _json(run_paseo, home, "inspect", t)["agent"]["id"] for t in ("alpha", "bravo")}

    for restarted in (False, True):
        by_agent = _json(run_paseo, home, "usage", "--by", "agent")
        groups = {g["key"]: g for g in by_agent["groups"]}
        assert [g["key"] for g in by_agent["groups"]] == [ids["alpha"], ids["bravo"]], restarted
        assert {k: groups[ids["alpha"]][k] for k in ("turns", "inputTokens", "outputTokens")} == {
            "turns": 2,
            "inputTokens": 150,
            "outputTokens": 25,
        }
        assert groups[ids["alpha"]]["costUsd"] == 0.75
        assert groups[ids["alpha"]]["cacheReadTokens"] is None  # never reported, never guessed
        assert (groups[ids["bravo"]]["turns"], groups[ids["bravo"]]["inputTokens"]) == (2, 10)
        assert groups[ids["bravo"]]["costUsd"] is None
        assert groups[ids["bravo"]]["costUnknownTurns"] == 2
        assert by_agent["total"]["turns"] == 4
        by_provider = _json(run_paseo, home, "usage", "--by", "provider")["groups"]
        assert [(g["key"], g["turns"], g["costUsd"]) for g in by_provider] == [
            ("scripted", 4, 0.75)
        ]
        by_source = _json(run_paseo, home, "usage", "--by", "schedule")["groups"]
        assert {g["key"]: g["turns"] for g in by_source} == {None: 2, "schedule:sched1": 2}
        future = _json(run_paseo, home, "usage", "--since", "2999-01-01")
        assert future["groups"] == []
        recent = _json(run_paseo, home, "usage", "--since", "1h", "--agent", "alpha")["groups"]
        assert [g["turns"] for g in recent] == [2]
        # The agent's record carries the last turn's report (what clients show beside it).
        alpha = _json(run_paseo, home, "inspect", "alpha")["agent"]
        reported = {k: v for k, v in alpha["lastUsage"].items() if v is not None}
        assert reported == {"inputTokens": 50, "outputTokens": 5, "costUsd": 0.25}
        table = _cli(run_paseo, home, "usage", "--by", "agent")
        assert "TOTAL" in table.stdout
        assert "no cost" in table.stderr
        if not restarted:
            stop_daemon(home)
            home = agent_daemon_factory(config).home


def test_bad_usage_arguments_are_specific(
    agent_daemon_factory: Callable[..., LiveDaemon], run_paseo: Run
) -> None:
    home = agent_daemon_factory().home
    bad = _cli(run_paseo, home, "usage", "--since", "last tuesday")
    assert bad.returncode != 0
    assert "30m, 12h, 7d, 2w" in bad.stderr
    assert "Traceback" not in bad.stderr
    wrong = _cli(run_paseo, home, "usage", "--by", "colour")
    assert wrong.returncode == 2


def test_a_usd_budget_refuses_prompts_and_an_interrupted_turn_is_accounted(
    agent_daemon_factory: Callable[..., LiveDaemon], run_paseo: Run, workdir: Path
) -> None:
    home = agent_daemon_factory().home
    created = _cli(
        run_paseo,
        home,
        "run",
        "--provider",
        "scripted",
        "--cwd",
        str(workdir),
        "--title",
        "c",
        "--budget-usd",
        "1",
        "--wait-timeout",
        "30s",
        "[[usage:10:10:0.6]] first",
    )
    assert created.returncode == 0, created.stderr
    # Under the budget: the next prompt runs, and spends past it.
    second = _cli(run_paseo, home, "send", "--wait-timeout", "30s", "c", "[[usage:1:1:0.6]] two")
    assert second.returncode == 0
    agent = _json(run_paseo, home, "inspect", "c")
    assert agent["agent"]["attentionReason"] == "budget"
    assert agent["usage"]["costUsd"] == pytest.approx(1.2)
    refused = _cli(run_paseo, home, "send", "c", "never-sent")
    assert refused.returncode == 9
    assert "$1.2000 of its $1.0000 budget" in refused.stderr
    assert "paseo agent budget" in refused.stderr
    logs = _cli(run_paseo, home, "logs", "c", "-o", "json").stdout
    assert "never-sent" not in logs
    bad = _cli(run_paseo, home, "agent", "budget", "c", "--usd", "2", "--clear")
    assert bad.returncode == 2
    raised = _json(run_paseo, home, "agent", "budget", "c", "--usd", "5")
    assert raised["budget"]["usd"] == 5
    # An interrupted turn is accounted with what the program reported before it stopped.
    started = _cli(run_paseo, home, "send", "--no-wait", "c", "[[usage:7:3:0.1]] [[slow:30]] x")
    assert started.returncode == 0, started.stderr
    from paseo.client import SyncClient

    def turns_started() -> int:
        logs = _cli(run_paseo, home, "logs", "c", "-o", "json").stdout
        return logs.count('"turn_started"')

    wait_for(lambda: turns_started() == 3, timeout=30, what="the third turn to start")
    agent_id = agent["agent"]["id"]
    with SyncClient(home=home, client_type="sdk") as client:
        client.call("agent.interrupt", {"agentId": agent_id})
        client.call("agent.wait", {"agentId": agent_id, "timeout": 20}, timeout=30)
    spent = _json(run_paseo, home, "usage", "--agent", "c")["total"]
    assert spent["turns"] == 3
    assert spent["inputTokens"] == 18


def test_a_daily_project_cap_refuses_prompts_and_pauses_a_schedule(
    agent_daemon_factory: Callable[..., LiveDaemon], run_paseo: Run, workdir: Path
) -> None:
    from paseo.client import SyncClient

    home = agent_daemon_factory().home
    run = ["run", "--provider", "scripted", "--cwd", str(workdir), "--wait-timeout", "30s"]
    _cli(run_paseo, home, *run, "--title", "d", "[[usage:100:50:-]] spend").check_returncode()
    [project] = _json(run_paseo, home, "usage", "--by", "project")["groups"]
    assert project["key"]
    cap = [{"scope": "project", "id": project["key"], "period": "daily", "tokens": 100}]
    _cli(run_paseo, home, "config", "set", "daemon.budgets", json.dumps(cap)).check_returncode()
    _cli(run_paseo, home, "reload").check_returncode()

    refused = _cli(run_paseo, home, "send", "d", "never-sent")
    assert refused.returncode == 9
    assert f"the daily budget of project {project['key']} is spent" in refused.stderr
    assert "paseo config set daemon.budgets[0].tokens" in refused.stderr
    before = _json(run_paseo, home, "ls", "-a")
    with SyncClient(home=home, client_type="sdk") as client:
        target = {"type": "new-agent", "config": {"provider": "scripted", "cwd": str(workdir)}}
        created = client.call(
            "schedule.create",
            {
                "prompt": "scheduled",
                "cadence": {"type": "every", "everyMs": 3_600_000},
                "target": target,
            },
        )["schedule"]
        client.call("schedule.run-now", {"scheduleId": created["id"]})

        def paused() -> dict[str, Any] | None:
            got = client.call("schedule.inspect", {"scheduleId": created["id"]})["schedule"]
            return got if got["status"] == "paused" else None

        wait_for(paused, timeout=30, what="the schedule to pause itself")
        schedule = paused()
    assert schedule is not None
    assert schedule["pausedReason"].startswith("budget: the daily budget of project")
    assert schedule["runs"][-1]["status"] == "failed"
    assert len(_json(run_paseo, home, "ls", "-a")) == len(before)  # no agent was created
    # Raised, prompts run again.
    cap[0]["tokens"] = 10_000
    _cli(run_paseo, home, "config", "set", "daemon.budgets", json.dumps(cap)).check_returncode()
    _cli(run_paseo, home, "reload").check_returncode()
    again = _cli(run_paseo, home, "send", "--wait-timeout", "30s", "d", "after")
    assert again.returncode == 0, again.stderr


def test_a_schedule_gives_each_new_agent_its_budget(
    agent_daemon_factory: Callable[..., LiveDaemon], run_paseo: Run, workdir: Path
) -> None:
    from paseo.client import SyncClient

    home = agent_daemon_factory().home
    created = _json(
        run_paseo,
        home,
        "schedule",
        "create",
        "--every",
        "1h",
        "--provider",
        "scripted",
        "--cwd",
        str(workdir),
        "--budget-tokens",
        "10",
        "[[usage:20:0:-]] scheduled",
    )
    assert created["target"]["config"]["budget"]["tokens"] == 10
    with SyncClient(home=home, client_type="sdk") as client:
        client.call("schedule.run-now", {"scheduleId": created["id"]})

        def finished() -> dict[str, Any] | None:
            got = client.call("schedule.inspect", {"scheduleId": created["id"]})["schedule"]
            runs = got.get("runs") or []
            return runs[-1] if runs and runs[-1].get("endedAt") else None

        wait_for(finished, timeout=30, what="the scheduled run to end")
        run = finished()
    assert run is not None
    assert run["status"] == "succeeded"
    agent = _json(run_paseo, home, "inspect", run["agentId"])["agent"]
    assert agent["budget"]["tokens"] == 10
    assert agent["attentionReason"] == "budget"
    refused = _cli(run_paseo, home, "send", run["agentId"], "more")
    assert refused.returncode == 9


def test_a_budget_reached_mid_turn_interrupts_the_turn_after_its_step(
    agent_daemon_factory: Callable[..., LiveDaemon], run_paseo: Run, workdir: Path
) -> None:
    """The scripted provider reports usage after every step (as Claude Code does per model
    call): the step that reaches the budget is the last, the turn ends canceled for
    ``budget``, with a note, attention ``budget`` and its usage accounted."""
    home = agent_daemon_factory().home
    # 110 tokens a step (100 in, 10 out): the third step reaches 250. Unstopped, the twenty
    # steps would wait 5 s each, past the run's wait.
    created = _cli(
        run_paseo,
        home,
        "run",
        "--provider",
        "scripted",
        "--cwd",
        str(workdir),
        "--title",
        "mid",
        "--budget-tokens",
        "250",
        "--wait-timeout",
        "60s",
        "[[steps:20:100:10]] work",
    )
    assert "timed out" not in created.stderr, created.stderr
    logs = _cli(run_paseo, home, "logs", "mid", "-o", "json").stdout
    assert "step 3" in logs
    assert "step 4" not in logs
    assert "budget reached during the turn (330 of its 250 tokens budget)" in logs
    entries = [json.loads(line) for line in logs.splitlines() if line.strip()]
    events = [e.get("event", e) for e in entries]
    canceled = [e for e in events if isinstance(e, dict) and e.get("type") == "turn_canceled"]
    assert [e.get("reason") for e in canceled] == ["budget"], logs
    agent = _json(run_paseo, home, "inspect", "mid")
    assert agent["agent"]["attentionReason"] == "budget"
    assert (agent["usage"]["turns"], agent["usage"]["inputTokens"]) == (1, 300)
    refused = _cli(run_paseo, home, "send", "mid", "more")
    assert refused.returncode == 9
    assert "330 of its 250 tokens budget" in refused.stderr


def test_a_daemon_cap_reached_mid_turn_interrupts_the_turn_after_its_step(
    agent_daemon_factory: Callable[..., LiveDaemon], run_paseo: Run, workdir: Path
) -> None:
    """A ``daemon.budgets`` cap counts what the running turn reported so far too: the step
    that spends it is the last (before, caps were checked only before a prompt)."""
    cap = [{"scope": "daemon", "period": "daily", "tokens": 250}]
    home = agent_daemon_factory(scripted_config({"daemon": {"budgets": cap}})).home
    created = _cli(
        run_paseo, home,
        "run", "--provider", "scripted", "--cwd", str(workdir), "--title", "capped",
        "--wait-timeout", "60s", "[[steps:20:100:10]] work",
    )  # fmt: skip
    assert "timed out" not in created.stderr, created.stderr
    logs = _cli(run_paseo, home, "logs", "capped", "-o", "json").stdout
    assert "step 3" in logs
    assert "step 4" not in logs
    assert "budget reached during the turn: the daily budget of the daemon is spent" in logs
    assert "paseo config set daemon.budgets[0].tokens" in logs
    events = [json.loads(line) for line in logs.splitlines() if line.strip()]
    canceled = [
        e.get("event", e) for e in events if e.get("event", e).get("type") == "turn_canceled"
    ]
    assert [e.get("reason") for e in canceled] == ["budget"], logs
    agent = _json(run_paseo, home, "inspect", "capped")
    assert agent["agent"]["attentionReason"] == "budget"
    refused = _cli(run_paseo, home, "send", "capped", "more")
    assert refused.returncode == 9
    assert "the daily budget of the daemon is spent" in refused.stderr
