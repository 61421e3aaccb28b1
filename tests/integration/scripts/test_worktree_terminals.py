"""``worktree.terminals`` through the real daemon: opened (each with its command typed in)
when ``paseo worktree create`` makes the worktree, listed by ``paseo terminal ls``, closed by
``paseo worktree archive``; a fork's worktree opens none until ``paseo worktree trust``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon
from integration.scripts.conftest import git
from integration.scripts.test_scripts_cli import wait_for

TERMINALS = [{"name": "dev", "command": "echo dev-terminal-ran"}]


def _add_terminals(repo: Path) -> None:
    config = json.loads((repo / "paseo.json").read_text())
    config["worktree"]["terminals"] = TERMINALS
    (repo / "paseo.json").write_text(json.dumps(config))
    git(repo, "commit", "-q", "-am", "terminals")


def _terminals(run_paseo: Any, workspace_id: str) -> list[dict[str, Any]]:
    listed = run_paseo("terminal", "ls", "--workspace", workspace_id, "-o", "json", check=True)
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found


def test_worktree_terminals_open_at_creation_and_close_at_archive(
    daemon: LiveDaemon, repo: Path, run_paseo: Any
) -> None:
    _add_terminals(repo)
    run_paseo("project", "add", str(repo), check=True)
    created = json.loads(
        run_paseo("worktree", "create", "--cwd", str(repo), "-o", "json", check=True).stdout
    )
    wid = created["workspace"]["workspaceId"]
    opened = _terminals(run_paseo, wid)
    assert len(opened) == 1
    terminal_id = opened[0]["terminalId"]
    assert opened[0]["title"] == "dev"  # the entry's name (the shell sets no title here)

    def ran() -> bool:
        shown = run_paseo("terminal", "capture", terminal_id, check=True).stdout
        return "dev-terminal-ran" in shown.replace("echo dev-terminal-ran", "")

    wait_for(ran, 30, "the terminal's command to run")
    assert _terminals(run_paseo, wid)[0]["title"] == "dev"
    run_paseo("worktree", "archive", wid, "--force", check=True)
    assert _terminals(run_paseo, wid) == []


def test_a_forks_worktree_opens_its_terminals_only_once_trusted(
    daemon: LiveDaemon, repo: Path, run_paseo: Any, tmp_path: Path
) -> None:
    _add_terminals(repo)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main:refs/pull/8/head")
    run_paseo("project", "add", str(repo), check=True)
    created = json.loads(
        run_paseo(
            "worktree", "create", "--cwd", str(repo), "--pr", "8",
            "--head-repository", "someone/fork", "-o", "json", check=True,
        ).stdout
    )  # fmt: skip
    wid = created["workspace"]["workspaceId"]
    assert _terminals(run_paseo, wid) == []
    run_paseo("worktree", "trust", wid, check=True)
    assert len(_terminals(run_paseo, wid)) == 1
