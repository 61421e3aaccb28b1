"""``paseo loop run --worktree NAME``: the loop works in a Paseo-owned worktree on branch NAME
(made with it, or reused), its agents placed in that worktree's workspace, its checks run
there; ``--base`` without ``--worktree`` is refused before anything changes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from integration.workspaces.conftest import git_env

__all__ = ["git_env"]

Run = Callable[..., subprocess.CompletedProcess[str]]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


def test_a_loop_runs_in_the_worktree_it_names(
    agent_daemon: LiveDaemon, client: Any, run_paseo: Run, tmp_path: Path, git_env: None
) -> None:
    repo = _repo(tmp_path)
    env = {"PASEO_HOME": str(agent_daemon.home)}
    run = ["loop", "run", "tidy up", "--provider", "scripted", "--cwd", str(repo)]
    check = ["--verify-check", "git rev-parse --abbrev-ref HEAD | grep -qx loop-work"]

    bad = run_paseo(*run, "--base", "main", *check, "-o", "json", env=env)
    assert bad.returncode != 0
    assert "give --worktree NAME too" in bad.stderr
    assert client.call("loop.list", {})["loops"] == []

    started = run_paseo(*run, "--worktree", "loop-work", *check, "-o", "json", env=env)
    assert started.returncode == 0, started.stderr
    loop = json.loads(started.stdout)
    [worktree] = client.call("worktree.list", {})["worktrees"]
    assert worktree["branch"] == "loop-work"
    assert loop["cwd"] == worktree["path"] != str(repo)

    def ended() -> dict[str, Any] | None:
        record: dict[str, Any] = client.call("loop.inspect", {"id": loop["id"]})["loop"]
        return record if record["status"] not in ("running", "sleeping") else None

    record = wait_for(ended, timeout=60, what="the loop to end")
    assert record["status"] == "succeeded", record  # the check ran on the worktree's branch
    worker = client.call("agent.get", {"agentId": record["iterations"][0]["workerAgentId"]})
    assert worker["agent"]["workspaceId"] == worktree["workspaceId"]
    assert worker["agent"]["cwd"] == worktree["path"]

    again = run_paseo(*run, "--worktree", "loop-work", *check, "-o", "json", env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["cwd"] == worktree["path"]  # the same worktree, reused
    assert len(client.call("worktree.list", {})["worktrees"]) == 1
