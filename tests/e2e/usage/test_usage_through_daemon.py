"""Usage accounting through the real daemon, the real ``paseo`` CLI and real Claude Code
behind the fake model server, which reports the token counts each prompt asks for
(``[[usage:IN:OUT:CACHE_READ:CACHE_WRITE]]``).

``paseo usage --by agent`` and ``--by provider`` equal exactly what Claude Code reported at the
end of each turn (its ``result`` message's ``usage`` and ``total_cost_usd``, as the turn's
``turn_completed`` event carries it), also after the daemon restarts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, logs, poll, provider_settings

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"

TOKENS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def _json(daemon: RealDaemon, *args: str) -> Any:
    return json.loads(daemon.cli(*args, "-o", "json").stdout)


def _reported(daemon: RealDaemon, agent: str) -> list[dict[str, Any]]:
    """The usage of every turn the program reported, as its timeline holds it."""
    return [
        entry["event"].get("usage") or {}
        for entry in logs(daemon, agent)
        if entry["event"]["type"] == "turn_completed"
    ]


def _sum(reported: list[dict[str, Any]]) -> dict[str, Any]:
    names = {
        "inputTokens": "inputTokens",
        "outputTokens": "outputTokens",
        "cacheReadTokens": "cachedInputTokens",
        "cacheWriteTokens": "cacheWriteTokens",
        "costUsd": "costUsd",
    }
    total: dict[str, Any] = {"turns": len(reported)}
    for ours, theirs in names.items():
        values = [u[theirs] for u in reported if u.get(theirs) is not None]
        total[ours] = sum(values) if values else None
    return total


def _totals(group: dict[str, Any]) -> dict[str, Any]:
    return {k: group[k] for k in ("turns", *TOKENS, "costUsd")}


def _turns(
    daemon: RealDaemon, provider: str, work: Path, prompts: dict[str, list[str]]
) -> dict[str, str]:
    """Run each titled agent's prompts (a ``paseo run``, then ``paseo send``s); their ids."""
    ids = {}
    for title, (first, *rest) in prompts.items():
        run = ["run", "--provider", provider, "--cwd", str(work), "--title", title]
        daemon.cli(*run, "--wait-timeout", WAIT, first)
        for prompt in rest:
            daemon.cli("send", "--wait-timeout", WAIT, title, prompt)
        ids[title] = _json(daemon, "inspect", title)["agent"]["id"]
    return ids


def test_usage_equals_what_claude_code_reported(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    prompts = {
        "first": ["[[usage:1200:300:40:7]] [[reply:one]]", "[[usage:800:100:0:0]] [[reply:two]]"],
        "second": ["[[usage:5000:250:1000:60]] [[reply:three]]"],
    }
    ids = _turns(daemon, "claude", work, prompts)

    reported = {title: _reported(daemon, title) for title in prompts}
    expected = {ids[title]: _sum(turns) for title, turns in reported.items()}
    # The fake's counts reached Claude Code and came back in its result.
    assert [u["inputTokens"] for u in reported["first"]] == [1200, 800]
    assert [u["outputTokens"] for u in reported["first"]] == [300, 100]
    assert reported["second"][0]["cachedInputTokens"] == 1000
    assert reported["second"][0]["cacheWriteTokens"] == 60
    assert all(u["costUsd"] is not None for turns in reported.values() for u in turns)

    for restarted in (False, True):
        by_agent = _json(daemon, "usage", "--by", "agent")
        assert {g["key"]: _totals(g) for g in by_agent["groups"]} == expected, restarted
        costs = [g["costUsd"] for g in by_agent["groups"]]
        assert costs == sorted(costs, reverse=True)  # most expensive first
        by_provider = _json(daemon, "usage", "--by", "provider")
        assert {g["key"]: _totals(g) for g in by_provider["groups"]} == {
            "claude": _sum(reported["first"] + reported["second"])
        }
        shown = _json(daemon, "inspect", "first")["usage"]
        assert _totals(shown) == expected[ids["first"]]
        table = daemon.cli("usage", "--by", "provider").stdout
        assert "claude" in table
        assert "TOTAL" in table
        if not restarted:
            daemon.stop()
            daemon.start()


@pytest.mark.parametrize("provider", ["codex", "claude-acp"])
def test_usage_equals_what_other_programs_reported(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path, provider: str
) -> None:
    """The same accounting for Codex (the Responses API's usage, reported in its
    ``token_count`` events) and an ACP agent (Claude's ACP adapter): what each program reported
    at the end of its turns is what ``paseo usage`` sums, by agent and by provider, before and
    after a restart."""
    daemon.configure({provider: provider_settings(provider, fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    prompts = {
        "first": ["[[usage:1200:300:40:0]] [[reply:one]]", "[[usage:800:100:0:0]] [[reply:two]]"],
        "second": ["[[usage:5000:250:1000:0]] [[reply:three]]"],
    }
    ids = _turns(daemon, provider, work, prompts)

    reported = {title: _reported(daemon, title) for title in prompts}
    # Each turn reported something, and the fake's output counts came back through the program.
    assert [len(turns) for turns in reported.values()] == [2, 1]
    assert [u.get("outputTokens") for u in reported["first"]] == [300, 100], reported
    expected = {ids[title]: _sum(turns) for title, turns in reported.items()}
    for restarted in (False, True):
        by_agent = _json(daemon, "usage", "--by", "agent")
        assert {g["key"]: _totals(g) for g in by_agent["groups"]} == expected, restarted
        by_provider = _json(daemon, "usage", "--by", "provider")
        assert {g["key"]: _totals(g) for g in by_provider["groups"]} == {
            provider: _sum(reported["first"] + reported["second"])
        }
        if not restarted:
            daemon.stop()
            daemon.start()


def test_a_token_budget_refuses_the_next_prompt_until_raised(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    ran = daemon.cli(
        "run",
        "--provider",
        "claude",
        "--cwd",
        str(work),
        "--title",
        "capped",
        "--budget-tokens",
        "1000",
        "--wait-timeout",
        WAIT,
        "[[usage:900:200:0:0]] [[reply:spent]]",
    )
    assert ran.stdout == "spent\n"
    agent = _json(daemon, "inspect", "capped")["agent"]
    assert agent["budget"]["tokens"] == 1000
    assert agent["attentionReason"] == "budget"
    assert agent["requiresAttention"] is True
    requests = len(fake.model_requests())

    refused = daemon.cli("send", "--wait-timeout", WAIT, "capped", "over-marker", check=False)
    assert refused.returncode == 9
    assert "1100 of its 1000 tokens budget" in refused.stderr
    assert f"paseo agent budget {agent['id'][:8]} --tokens N" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert len(fake.model_requests()) == requests  # nothing reached the model
    assert not any("over-marker" in r.prompt for r in fake.model_requests())
    kinds = [e["event"].get("item", {}).get("text") for e in logs(daemon, "capped")]
    assert "over-marker" not in kinds

    shown = _json(daemon, "agent", "budget", "capped")
    assert shown["budget"]["tokens"] == 1000
    raised = _json(daemon, "agent", "budget", "capped", "--tokens", "5000")
    assert raised["budget"]["tokens"] == 5000
    assert _json(daemon, "inspect", "capped")["agent"]["requiresAttention"] is False
    sent = daemon.cli("send", "--wait-timeout", WAIT, "capped", "after-marker [[reply:again]]")
    assert sent.stdout == "again\n"
    assert any("after-marker" in r.prompt for r in fake.model_requests())

    # Lifted, the budget survives no restart as a cap; the spend stays counted.
    daemon.cli("agent", "budget", "capped", "--clear")
    daemon.stop()
    daemon.start()
    assert _json(daemon, "inspect", "capped")["agent"].get("budget") is None
    assert _json(daemon, "usage", "--agent", "capped")["total"]["turns"] == 2


def test_claude_codes_per_call_usage_stops_a_turn_mid_way_at_its_budget(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    """Claude Code reports each model call's usage on its ``assistant`` message: the first
    call (a shell command that would take 30 s, then a second call for its result) already
    spends the budget, so the turn is interrupted there, for ``budget``.

    The command does not start with ``sleep``: Claude Code refuses a leading long sleep at once
    (a ``tool_use_error`` result, "Blocked: sleep 30 followed by: ..."), and its second call
    then raced the interrupt, a fraction of a second instead of 30 s. ``echo`` and ``sleep``
    run without a permission prompt in the default mode (a prompt would end the CLI's wait)."""
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    daemon.cli(
        "run",
        "--provider",
        "claude",
        "--cwd",
        str(work),
        "--title",
        "midway",
        "--budget-tokens",
        "500",
        "--wait-timeout",
        WAIT,
        "[[usage:900:200:0:0]] [[shell:echo early; sleep 30; echo late]]",
        check=False,
    )
    events = [entry["event"] for entry in logs(daemon, "midway")]
    ends = [e for e in events if e["type"] in ("turn_completed", "turn_canceled", "turn_failed")]
    assert [(e["type"], e.get("reason")) for e in ends] == [("turn_canceled", "budget")], ends
    notes = [e["item"].get("message", "") for e in events if e["type"] == "timeline"]
    assert any(n.startswith("budget reached during the turn") for n in notes), notes
    texts = [e["item"].get("text") or "" for e in events if e["type"] == "timeline"]
    assert not any("tool said" in text for text in texts)  # no call after the first
    agent = _json(daemon, "inspect", "midway")["agent"]
    assert agent["attentionReason"] == "budget"


def test_a_daily_project_cap_pauses_a_schedule_of_real_claude_code_agents(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    """A project's daily token cap, spent by a real Claude Code turn, refuses the next prompt
    and pauses a schedule whose runs would start Claude Code agents in that project: no run
    reaches the model, and no agent is created for it."""
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    run = ["run", "--provider", "claude", "--cwd", str(work), "--wait-timeout", WAIT]
    spent = daemon.cli(*run, "--title", "daily", "[[usage:100:50:0:0]] [[reply:spent]]")
    assert spent.stdout == "spent\n"
    [project] = _json(daemon, "usage", "--by", "project")["groups"]
    assert project["inputTokens"] == 100
    cap = [{"scope": "project", "id": project["key"], "period": "daily", "tokens": 100}]
    daemon.cli("config", "set", "daemon.budgets", json.dumps(cap))
    daemon.cli("reload")
    requests = len(fake.model_requests())

    refused = daemon.cli("send", "--wait-timeout", WAIT, "daily", "never-sent", check=False)
    assert refused.returncode == 9
    assert f"the daily budget of project {project['key']} is spent" in refused.stderr
    agents_before = len(_json(daemon, "ls", "-a"))
    with daemon.client() as client:
        target = {"type": "new-agent", "config": {"provider": "claude", "cwd": str(work)}}
        created = client.call(
            "schedule.create",
            {
                "prompt": "scheduled-marker [[reply:never]]",
                "cadence": {"type": "every", "everyMs": 3_600_000},
                "target": target,
            },
        )["schedule"]
        client.call("schedule.run-now", {"scheduleId": created["id"]})

        def paused() -> dict[str, Any] | None:
            got: dict[str, Any] = client.call("schedule.inspect", {"scheduleId": created["id"]})[
                "schedule"
            ]
            return got if got["status"] == "paused" else None

        schedule = poll(paused, timeout=60, what="the schedule to pause itself")
    assert schedule["pausedReason"].startswith("budget: the daily budget of project")
    assert schedule["runs"][-1]["status"] == "failed"
    assert len(_json(daemon, "ls", "-a")) == agents_before  # no agent was created
    assert len(fake.model_requests()) == requests  # nothing reached the model
    assert not any("scheduled-marker" in r.prompt for r in fake.model_requests())
