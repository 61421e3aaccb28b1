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


def _workspace(repo: Path, branch: str, base: str | None) -> WorkspaceRecord:
    return WorkspaceRecord(
        workspaceId=f"w-{branch}", projectId="p1", cwd=str(repo), kind="local_checkout",
        displayName="repo", branch=branch, baseBranch=base,
        createdAt="2026-12-02T00:00:00Z", updatedAt="2026-12-02T00:00:00Z", archivedAt=None,
    )  # fmt: skip


def test_the_diff_stat_counts_lines_since_the_base_and_origin_is_named(tmp_path: Path) -> None:
    """The sidebar's ``+N -M`` (the TypeScript daemon's ``getCheckoutShortstat``): a branch's
    committed and uncommitted changes since its merge base with the base branch; on the base
    branch without ``origin/<branch>``, none."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\ntwo\nthree\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "b.txt").write_text("b\nb\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    (repo / "a.txt").write_text("one\nTWO\nthree\n")  # uncommitted: 1 added, 1 removed
    runtimes = GitRuntimes(GitRunner(GitProcessLimiter()))

    async def scenario() -> None:
        feature = await runtimes.get(_workspace(repo, "feature", "main"))
        assert feature.diffStat == {"additions": 3, "deletions": 1}
        assert feature.remoteUrl is None
        # On the base branch with no origin/main there is nothing to compare with.
        assert (await runtimes.get(_workspace(repo, "main", "main"))).diffStat is None
        git(repo, "remote", "add", "origin", str(origin))
        git(repo, "push", "-q", "origin", "main")
        git(repo, "checkout", "-q", "main")
        git(repo, "commit", "-q", "-am", "three")
        on_main = await runtimes.get(_workspace(repo, "main", None))
        assert on_main.diffStat == {"additions": 1, "deletions": 1}  # not yet on origin/main
        assert on_main.remoteUrl == str(origin)
        assert on_main.to_json()["diffStat"] == {"additions": 1, "deletions": 1}

    asyncio.run(scenario())


def test_a_shortstat_line_is_parsed_as_the_typescript_daemon_does() -> None:
    from paseo.workspaces.git_runtime import parse_shortstat

    assert parse_shortstat(" 2 files changed, 5 insertions(+), 1 deletion(-)") == {
        "additions": 5,
        "deletions": 1,
    }
    assert parse_shortstat(" 1 file changed, 1 insertion(+)") == {"additions": 1, "deletions": 0}
    assert parse_shortstat("") is None
