"""Real Git repositories for the placement tests: a local bare remote (with a change request at
``refs/pull/7/head``) and a clone-like working repository, under a hermetic Git config."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from paseo_store_json import JsonStore

from paseo.git.limiter import GitProcessLimiter
from paseo.git.runner import GitRunner
from paseo.workspaces.service import Placement


def git(cwd: Path | str, *args: str) -> str:
    """Run git (outside the daemon's limiter: this is the test acting as a user)."""
    result = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
    return result.stdout.strip()


@dataclass
class Repos:
    repo: Path
    remote: Path
    pr_commit: str


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
    )
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def repos(tmp_path: Path, git_env: None) -> Repos:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("hello\n")
    (repo / "packages" / "api").mkdir(parents=True)
    (repo / "packages" / "api" / "main.py").write_text("print('api')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    git(repo, "branch", "feature")
    git(repo, "push", "-q", "origin", "feature")
    # A change request: a commit only the remote has, under refs/pull/7/head.
    git(repo, "checkout", "-q", "-b", "contrib")
    (repo / "CONTRIB.md").write_text("from a contributor\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "contribution")
    pr_commit = git(repo, "rev-parse", "HEAD")
    git(repo, "push", "-q", "origin", "contrib:refs/pull/7/head")
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-q", "-D", "contrib")
    # Forget the commit locally so only a fetch of the change request can bring it back.
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    git(repo, "fetch", "-q", "origin")
    git(repo, "remote", "set-head", "origin", "main")
    return Repos(repo=repo, remote=remote, pr_commit=pr_commit)


@dataclass
class Env:
    home: Path
    store: JsonStore
    placement: Placement
    runner: GitRunner


@contextlib.asynccontextmanager
async def placement_env(home: Path) -> AsyncIterator[Env]:
    """An open json store under ``home`` and every placement service over it."""
    store = JsonStore(home)
    await store.open()
    runner = GitRunner(GitProcessLimiter())
    placement = Placement.build(
        store, home=home, git=runner, worktrees_root=lambda: str(home / "worktrees")
    )
    try:
        yield Env(home, store, placement, runner)
    finally:
        await placement.reconciler.stop()
        await store.close()


@pytest.fixture
def open_env(paseo_home: Path) -> Callable[[], contextlib.AbstractAsyncContextManager[Env]]:
    """``async with open_env() as env``: placement services over a json store in the test's
    ``$PASEO_HOME``."""
    return lambda: placement_env(paseo_home)


@pytest.fixture
def run_git() -> Callable[..., str]:
    return git
