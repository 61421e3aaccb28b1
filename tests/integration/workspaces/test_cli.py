"""The project, workspace, worktree and label commands against a real daemon."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon


@pytest.fixture
def daemon(paseo_home: Path, git_env: None) -> Iterator[LiveDaemon]:
    live = start_daemon(paseo_home)
    try:
        yield live
    finally:
        stop_daemon(paseo_home)
        kill_leftover(live.pid)


def test_cli_round_trip(daemon: LiveDaemon, repos: Any, run_paseo: Any, tmp_path: Path) -> None:
    def paseo(*args: str) -> Any:
        result = run_paseo(*args, "-o", "json", check=True)
        return json.loads(result.stdout)

    project = paseo("project", "add", str(repos.repo))
    assert project["rootPath"] == str(repos.repo)
    assert paseo("project", "add", str(repos.repo))["projectId"] == project["projectId"]
    assert [p["projectId"] for p in paseo("project", "ls")] == [project["projectId"]]
    renamed = paseo("project", "rename", project["projectId"], "Repo!")
    assert renamed["customName"] == "Repo!"

    missing = run_paseo("workspace", "open", str(tmp_path / "nope"))
    assert missing.returncode == 1
    assert "does not exist" in missing.stderr

    workspace = paseo("workspace", "open", str(repos.repo))
    assert workspace["branch"] == "main"
    paseo("label", "create", "urgent", "--color", "red")
    labelled = paseo("workspace", "label", workspace["workspaceId"], "--add", "urgent")
    assert labelled["labels"] == ["urgent"]
    paseo("label", "rename", "urgent", "soon")
    assert paseo("workspace", "ls")[0]["labels"] == ["soon"]
    assert paseo("label", "ls") == [{"name": "soon", "color": "red"}]

    bad = run_paseo("worktree", "create", "--cwd", str(repos.repo), "--branch", "a..b")
    assert bad.returncode == 1
    assert "invalid branch name" in bad.stderr

    created = paseo("worktree", "create", "--cwd", str(repos.repo), "--branch", "cli-work")
    assert created["workspace"]["branch"] == "cli-work"
    wid = created["workspace"]["workspaceId"]
    assert [w["workspaceId"] for w in paseo("worktree", "ls")] == [wid]
    archived = paseo("worktree", "archive", wid)
    assert archived["removedCheckout"]
    restored = paseo("worktree", "restore", wid)
    assert restored["archivedAt"] is None
    assert Path(restored["cwd"]).is_dir()

    table = run_paseo("project", "ls", check=True).stdout
    assert "Repo!" in table


def test_cli_without_a_daemon_says_how_to_start_it(run_paseo: Any, paseo_home: Path) -> None:
    result = run_paseo("project", "ls")
    assert result.returncode == 1
    assert "paseo daemon start" in result.stderr
