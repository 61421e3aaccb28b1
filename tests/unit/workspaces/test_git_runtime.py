"""A workspace's live Git state (``workspace.gitRuntime``): uncommitted changes and commits
ahead of its base, read through the Git runner and kept a few seconds, so a sidebar refreshing
on every event does not start Git processes for each."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from paseo_hookspecs.records import WorkspaceRecord

from paseo.git.limiter import GitProcessLimiter
from paseo.git.runner import GitRunner
from paseo.workspaces.git_runtime import TTL, GitRuntimes

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, timeout=30, capture_output=True)


def test_changes_and_ahead_behind_are_read_and_kept(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    workspace = WorkspaceRecord(
        workspaceId="w1", projectId="p1", cwd=str(repo), kind="local_checkout",
        displayName="repo", branch="feature", baseBranch="main",
        createdAt="2026-12-02T00:00:00Z", updatedAt="2026-12-02T00:00:00Z", archivedAt=None,
    )  # fmt: skip
    now = [0.0]
    runner = GitRunner(GitProcessLimiter())
    runtimes = GitRuntimes(runner, clock=lambda: now[0])

    async def scenario() -> None:
        first = await runtimes.get(workspace)
        assert (first.isDirty, first.aheadBehind) == (False, {"ahead": 1, "behind": 0})
        assert first.aheadOfOrigin is None  # no origin
        started = runner.processes_started
        (repo / "c.txt").write_text("c\n")
        assert (await runtimes.get(workspace)).isDirty is False  # kept
        assert runner.processes_started == started
        now[0] += TTL + 1
        assert (await runtimes.get(workspace)).isDirty is True

    asyncio.run(scenario())
