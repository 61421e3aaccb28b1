"""``paseo run --worktree NAME [--base REF]`` against a real daemon and a real Git repository:
the agent works in a Paseo-owned worktree on branch NAME; a later run with the same name uses
the same worktree."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon
from helpers.waiting import wait_for

from .conftest import Repos, git

SCRIPTED_PLUGIN = Path(__file__).resolve().parents[1] / "agents" / "scripted_agent"


@pytest.fixture
def daemon(paseo_home: Path, git_env: None) -> Iterator[LiveDaemon]:
    paseo_home.mkdir(parents=True, exist_ok=True)
    config = {"plugins": {"scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)}}}
    (paseo_home / "config.json").write_text(json.dumps(config))
    live = start_daemon(paseo_home)
    try:
        yield live
    finally:
        stop_daemon(paseo_home)
        kill_leftover(live.pid)


def test_run_in_a_named_worktree(daemon: LiveDaemon, repos: Repos, run_paseo: Any) -> None:
    def run(*args: str) -> dict[str, Any]:
        done = run_paseo(
            "run",
            "--provider",
            "scripted",
            "--cwd",
            str(repos.repo),
            "-o",
            "json",
            *args,
            check=True,
        )
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    first = run("--worktree", "agent-work", "--base", "feature", "[[history]] one")
    assert first["outcome"] == "idle"
    record = json.loads(run_paseo("inspect", first["agentId"], "-o", "json", check=True).stdout)
    cwd = Path(record["agent"]["cwd"])
    assert cwd != repos.repo
    assert git(cwd, "rev-parse", "--abbrev-ref", "HEAD") == "agent-work"
    assert git(cwd, "rev-parse", "HEAD") == git(repos.repo, "rev-parse", "feature")
    [worktree] = json.loads(run_paseo("worktree", "ls", "-o", "json", check=True).stdout)
    assert worktree["branch"] == "agent-work"
    assert record["agent"]["workspaceId"] == worktree["workspaceId"]

    # The same name again (without --base): the same worktree, not a second one.
    second = run("--worktree", "agent-work", "two")
    again = json.loads(run_paseo("inspect", second["agentId"], "-o", "json", check=True).stdout)
    assert again["agent"]["workspaceId"] == worktree["workspaceId"]
    assert len(json.loads(run_paseo("worktree", "ls", "-o", "json", check=True).stdout)) == 1

    lone_base = run_paseo("run", "--base", "main", "--cwd", str(repos.repo), "x")
    assert lone_base.returncode == 2
    assert "give --worktree NAME too" in lone_base.stderr
    bad = run_paseo("run", "--worktree", "a..b", "--cwd", str(repos.repo), "x")
    assert bad.returncode == 1
    assert "invalid branch name" in bad.stderr


def test_archiving_a_worktree_stops_the_agents_working_in_it(
    daemon: LiveDaemon, repos: Repos, run_paseo: Any
) -> None:
    """An agent mid-turn in a worktree is stopped when the worktree is archived, not left
    running in a directory that no longer exists (issue 27, item 7)."""
    started = run_paseo(
        "run",
        "-d",
        "--provider",
        "scripted",
        "--cwd",
        str(repos.repo),
        "--worktree",
        "doomed",
        "-q",
        "[[slow:600]] work for a long time",
        check=True,
    )
    agent_id = started.stdout.strip()

    def inspect() -> dict[str, Any]:
        done = run_paseo("inspect", agent_id, "-o", "json", check=True)
        agent: dict[str, Any] = json.loads(done.stdout)["agent"]
        return agent

    wait_for(lambda: inspect()["lastStatus"] == "running", what="the agent's turn to run")
    record = inspect()
    cwd = Path(record["cwd"])
    assert cwd.is_dir()
    run_paseo("worktree", "archive", record["workspaceId"], "--force", check=True)
    after = inspect()
    assert after["lastStatus"] == "closed"
    assert not cwd.exists()
    logs = run_paseo("logs", agent_id, "-o", "json", check=True).stdout
    assert "turn_canceled" in logs
    assert "worktree archived" in logs
