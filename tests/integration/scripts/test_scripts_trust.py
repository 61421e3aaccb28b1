"""A fork's worktree (``untrustedSource``) runs nothing of its ``paseo.json`` until
``paseo worktree trust``: no setup at creation, no services, no scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon
from integration.scripts.conftest import git
from integration.scripts.test_scripts_cli import scripts, wait_for


def test_a_forks_worktree_runs_nothing_until_trusted(
    daemon: LiveDaemon, repo: Path, run_paseo: Any, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main:refs/pull/7/head")
    run_paseo("project", "add", str(repo), check=True)
    created = json.loads(
        run_paseo(
            "worktree", "create", "--cwd", str(repo), "--pr", "7",
            "--head-repository", "someone/fork", "-o", "json", check=True,
        ).stdout
    )  # fmt: skip
    workspace = created["workspace"]
    cwd, wid = workspace["cwd"], workspace["workspaceId"]
    assert workspace["untrustedSource"]["headRepository"] == "someone/fork"
    assert created["setup"] == []
    assert not (Path(cwd) / "setup-ran.txt").exists()

    for args in (("script", "start", "api"), ("script", "run", "hello")):
        refused = run_paseo(*args, "--cwd", cwd)
        assert refused.returncode == 1
        assert f"paseo worktree trust {wid}" in refused.stderr
    assert scripts(run_paseo, cwd)["api"]["status"] == "stopped"

    trusted = json.loads(run_paseo("worktree", "trust", wid, "-o", "json", check=True).stdout)
    assert trusted["workspace"].get("untrustedSource") is None
    assert [r["exitCode"] for r in trusted["setup"]] == [0]
    assert (Path(cwd) / "setup-ran.txt").read_text() == "set-up\n"

    assert run_paseo("script", "run", "hello", "--cwd", cwd).returncode == 3
    run_paseo("script", "start", "api", "--cwd", cwd, check=True)
    wait_for(lambda: scripts(run_paseo, cwd)["api"]["status"] == "running", 30, "api to run")
    run_paseo("script", "stop", "api", "--cwd", cwd, check=True)
