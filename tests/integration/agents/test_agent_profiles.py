"""Agent profiles (``daemon.agentProfiles``) through the real daemon: over RPC, with
``paseo run --profile``, in a schedule's target, and the errors a wrong name gets."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from integration.agents.conftest import scripted_config
from paseo_hookspecs.errors import NotFound

PROFILES = [
    {
        "id": "reviewer-1",
        "name": "Reviewer",
        "provider": "scripted",
        "modeId": "plan",
        "systemPrompt": "Review carefully.",
        "labels": {"team": "review", "kind": "profile"},
        "mcpServers": {"docs": {"type": "stdio", "command": "docs-server"}},
    }
]


@pytest.fixture
def profiled(agent_daemon_factory: Callable[..., LiveDaemon]) -> LiveDaemon:
    return agent_daemon_factory(scripted_config({"daemon": {"agentProfiles": PROFILES}}))


def _client(live: LiveDaemon) -> Any:
    from paseo.client import SyncClient

    return SyncClient(home=live.home, client_type="sdk")


def test_a_profile_gives_defaults_and_explicit_fields_win(
    profiled: LiveDaemon, workdir: Path
) -> None:
    with _client(profiled) as client:
        by_name = client.call("agent.create", {"profile": "Reviewer", "cwd": str(workdir)})["agent"]
        assert by_name["provider"] == "scripted"
        assert by_name["config"]["modeId"] == "plan"
        assert by_name["config"]["systemPrompt"] == "Review carefully."
        assert by_name["config"]["mcpServers"]["docs"]["command"] == "docs-server"
        assert by_name["labels"] == {"team": "review", "kind": "profile"}
        explicit = client.call(
            "agent.create",
            {
                "profile": "reviewer-1",
                "cwd": str(workdir),
                "modeId": "default",
                "systemPrompt": "Be quick.",
                "labels": {"team": "core"},
            },
        )["agent"]
        assert explicit["config"]["modeId"] == "default"
        assert explicit["config"]["systemPrompt"] == "Be quick."
        assert explicit["labels"] == {"team": "core", "kind": "profile"}


def test_an_unknown_profile_names_the_known_ones(
    profiled: LiveDaemon, workdir: Path, run_paseo: Callable[..., Any]
) -> None:
    with _client(profiled) as client:
        with pytest.raises(NotFound) as failure:
            client.call("agent.create", {"profile": "Reviewr", "cwd": str(workdir)})
        assert "unknown agent profile 'Reviewr'; known profiles: Reviewer" in str(failure.value)
        assert client.call("agent.list", {})["agents"] == []
    done = run_paseo(
        "run",
        "--profile",
        "nope",
        "--cwd",
        str(workdir),
        "hi",
        env={"PASEO_HOME": str(profiled.home)},
    )
    assert done.returncode != 0
    assert "unknown agent profile 'nope'; known profiles: Reviewer" in done.stderr
    assert "Traceback" not in done.stderr


def test_paseo_run_with_a_profile(
    profiled: LiveDaemon, workdir: Path, run_paseo: Callable[..., Any]
) -> None:
    env = {"PASEO_HOME": str(profiled.home)}
    done = run_paseo("run", "--profile", "Reviewer", "--cwd", str(workdir), "hello", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hello\n"
    listed = json.loads(run_paseo("ls", "-o", "json", env=env, check=True).stdout)
    assert [agent["config"]["modeId"] for agent in listed] == ["plan"]
    assert listed[0]["labels"]["team"] == "review"


def test_a_schedule_target_names_a_profile(
    profiled: LiveDaemon, workdir: Path, run_paseo: Callable[..., Any]
) -> None:
    env = {"PASEO_HOME": str(profiled.home)}
    bad = run_paseo(
        "schedule",
        "create",
        "tick",
        "--every",
        "1h",
        "--target",
        "new-agent",
        "--profile",
        "Nobody",
        "--cwd",
        str(workdir),
        env=env,
    )
    assert bad.returncode != 0
    assert "unknown agent profile 'Nobody'; known profiles: Reviewer" in bad.stderr
    with _client(profiled) as client:
        created = client.call(
            "schedule.create",
            {
                "prompt": "tick",
                "name": "nightly",
                "cadence": {"type": "every", "everyMs": 3_600_000},
                "target": {
                    "type": "new-agent",
                    "config": {"profile": "Reviewer", "cwd": str(workdir)},
                },
            },
        )["schedule"]
        stored = created["target"]["config"]
        assert (stored["provider"], stored["profile"]) == ("scripted", "Reviewer")
        client.call("schedule.run-now", {"scheduleId": "nightly"})
        runs: list[dict[str, Any]] = []

        def finished() -> bool:
            runs[:] = client.call("schedule.logs", {"scheduleId": "nightly"})["runs"]
            return bool(runs) and runs[-1]["status"] != "running"

        wait_for(finished, timeout=30, what="the schedule run to end")
        assert runs[-1]["status"] == "succeeded", runs[-1]
        agent = client.call("agent.get", {"agentId": runs[-1]["agentId"]})["agent"]
        assert agent["config"]["modeId"] == "plan"
        assert agent["config"]["systemPrompt"] == "Review carefully."
        assert agent["labels"]["team"] == "review"


def test_a_profiles_budget_caps_the_agents_it_launches(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, run_paseo: Callable[..., Any]
) -> None:
    capped = {"id": "capped-1", "name": "Capped", "provider": "scripted", "budget": {"tokens": 10}}
    live = agent_daemon_factory(scripted_config({"daemon": {"agentProfiles": [capped]}}))
    env = {"PASEO_HOME": str(live.home)}
    run = ["run", "--profile", "Capped", "--cwd", str(workdir), "--wait-timeout", "30s"]
    done = run_paseo(*run, "--title", "cap", "[[usage:20:0:-]] spend", env=env, timeout=90)
    assert done.returncode == 0, done.stderr
    agent = json.loads(run_paseo("inspect", "cap", "-o", "json", env=env, check=True).stdout)
    assert (agent["agent"]["budget"]["tokens"], agent["agent"]["budget"].get("usd")) == (10, None)
    assert agent["agent"]["attentionReason"] == "budget"
    refused = run_paseo("send", "cap", "more", env=env, timeout=90)
    assert refused.returncode == 9
    assert "20 of its 10 tokens budget" in refused.stderr
    # What the caller gives wins over the profile's.
    own = run_paseo(
        *run, "--title", "own", "--budget-usd", "3", "[[usage:20:0:-]] spend", env=env, timeout=90
    )
    assert own.returncode == 0, own.stderr
    agent = json.loads(run_paseo("inspect", "own", "-o", "json", env=env, check=True).stdout)
    assert (agent["agent"]["budget"].get("tokens"), agent["agent"]["budget"]["usd"]) == (None, 3)
    assert agent["agent"]["attentionReason"] != "budget"
