"""Filesystem events drive reconciliation between periodic passes.

Every test sets the periodic interval to an hour, so a refresh seen within seconds can only come
from the event path (the watcher and its settle re-check), never from the fallback poll. Before
acting, a test waits until the watch is demonstrably live (touching a watched ``HEAD`` produced an
event), then checks that its own Git command produced an event batch too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

OpenEnv = Callable[[], Any]

NEVER = 3600.0
"""A periodic interval no test outlives."""
WAIT = 15.0
"""Bound on every wait (a refresh by event takes well under a second)."""


async def reported_after(reconciler: Any, batches: int) -> None:
    """Wait until the watcher reports a batch after ``batches``: the refresh itself may have
    been done first by the delayed re-check of an earlier batch, racing the event's debounce."""

    async def reported() -> bool:
        return bool(reconciler.watcher.reported > batches)

    await until(reported, "the watcher to report the change")


async def until(predicate: Callable[[], Awaitable[bool]], what: str) -> None:
    """Poll ``predicate`` every 20 ms until it holds; fail after ``WAIT`` seconds."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out after {WAIT:.0f}s waiting for {what}")


def test_branch_switch_and_remote_change_arrive_by_events(
    open_env: OpenEnv, repos: Any, run_git: Callable[..., str]
) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            workspace, project, _ = await p.workspaces.open_directory(str(repos.repo))
            p.reconciler.interval = NEVER
            await p.reconciler.start()
            assert p.reconciler.watcher.running
            # The git dir is watched, the working tree is not.
            assert p.reconciler.watcher.watched_dirs == {str(repos.repo / ".git")}
            await live(p.reconciler, repos.repo / ".git" / "HEAD")
            batches = p.reconciler.watcher.reported

            run_git(repos.repo, "checkout", "-q", "-b", "x")

            async def on_branch_x() -> bool:
                return bool((await p.workspaces.get(workspace.workspaceId)).branch == "x")

            await until(on_branch_x, "the branch switch to reach the workspace")
            await reported_after(p.reconciler, batches)
            batches = p.reconciler.watcher.reported

            run_git(repos.repo, "remote", "set-url", "origin", "git@github.com:Acme/Moved.git")

            async def moved() -> bool:
                key = (await p.projects.get(project.projectId)).projectKey
                return bool(key == "remote:github.com/Acme/Moved")

            await until(moved, "the remote change to reach the project")
            await reported_after(p.reconciler, batches)
            after = await p.workspaces.get(workspace.workspaceId)
            assert (after.cwd, after.projectId, after.displayName) == (
                workspace.cwd,
                workspace.projectId,
                workspace.displayName,
            )
            assert env.runner.processes_started == 0

    asyncio.run(scenario())


def test_git_init_in_a_watched_directory_makes_it_a_git_project(
    open_env: OpenEnv, repos: Any, run_git: Callable[..., str], tmp_path: Path
) -> None:
    empty = tmp_path / "empty-project"
    empty.mkdir()

    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(empty))
            assert project.kind != "git"
            # A second, Git project only so the test can see the watch go live.
            await p.projects.add(str(repos.repo))
            p.reconciler.interval = NEVER
            await p.reconciler.start()
            # A non-Git directory is watched itself (non-recursively) to notice a new .git.
            assert p.reconciler.watcher.watched_dirs == {str(empty), str(repos.repo / ".git")}
            await live(p.reconciler, repos.repo / ".git" / "HEAD")
            batches = p.reconciler.watcher.reported

            run_git(empty, "init", "-q")

            async def is_git() -> bool:
                return bool((await p.projects.get(project.projectId)).kind == "git")

            await until(is_git, "git init to turn the project into a Git project")
            await reported_after(p.reconciler, batches)
            # Its watch moved from the directory to the new git dir.
            await until(
                _async(lambda: str(empty / ".git") in p.reconciler.watcher.watched_dirs),
                "the watch to follow the new repository",
            )
            assert str(empty) not in p.reconciler.watcher.watched_dirs

    asyncio.run(scenario())


def test_linked_worktree_and_locations_added_later_are_watched(
    open_env: OpenEnv, repos: Any, run_git: Callable[..., str], tmp_path: Path
) -> None:
    linked = tmp_path / "linked"

    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            await p.workspaces.open_directory(str(repos.repo))
            p.reconciler.interval = NEVER
            await p.reconciler.start()

            # A linked worktree opened while running: its .git is a file naming a git dir under
            # the main repository's; the watch set grows at the next pass.
            run_git(repos.repo, "worktree", "add", "-q", str(linked), "feature")
            workspace, _, _ = await p.workspaces.open_directory(str(linked))
            assert workspace.branch == "feature"
            await p.reconciler.reconcile_once()
            linked_git_dir = str(repos.repo / ".git" / "worktrees" / "linked")
            assert linked_git_dir in p.reconciler.watcher.watched_dirs
            assert (linked / ".git").read_text().startswith("gitdir: ")
            await live(p.reconciler, Path(linked_git_dir) / "HEAD")
            batches = p.reconciler.watcher.reported

            run_git(linked, "checkout", "-q", "-b", "linked-topic")

            async def switched() -> bool:
                branch = (await p.workspaces.get(workspace.workspaceId)).branch
                return bool(branch == "linked-topic")

            await until(switched, "the linked worktree's branch switch")
            await reported_after(p.reconciler, batches)

            # Archiving drops the location from the watch set.
            await p.workspaces.mark_archived(workspace.workspaceId)
            await p.reconciler.reconcile_once()
            assert linked_git_dir not in p.reconciler.watcher.watched_dirs

    asyncio.run(scenario())


def test_stopping_the_reconciler_stops_the_watcher(open_env: OpenEnv, repos: Any) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            await p.workspaces.open_directory(str(repos.repo))
            p.reconciler.interval = NEVER
            await p.reconciler.start()
            watch_tasks = [
                t for t in asyncio.all_tasks() if t.get_name() == "paseo-reconcile-watch"
            ]
            assert len(watch_tasks) == 1
            assert p.reconciler.watcher.running

            await p.reconciler.stop()

            assert not p.reconciler.watcher.running
            # It ended by itself (its stop event), not by cancellation.
            assert watch_tasks[0].done()
            assert not watch_tasks[0].cancelled()
            assert not [
                t for t in asyncio.all_tasks() if t.get_name().startswith("paseo-reconcile")
            ]

    asyncio.run(scenario())


def test_without_watchfiles_the_periodic_pass_still_reconciles(
    open_env: OpenEnv,
    repos: Any,
    run_git: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The library made unimportable, as on a host where it is missing.
    monkeypatch.setitem(sys.modules, "watchfiles", None)

    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            workspace, _, _ = await p.workspaces.open_directory(str(repos.repo))
            p.reconciler.interval = 0.1
            with caplog.at_level(logging.WARNING, logger="paseo.workspaces.watch"):
                await p.reconciler.start()
                await until(
                    _async(lambda: not p.reconciler.watcher.running), "the watcher to give up"
                )
            warnings = [r for r in caplog.records if r.name == "paseo.workspaces.watch"]
            assert len(warnings) == 1
            assert "periodic pass" in warnings[0].getMessage()

            run_git(repos.repo, "checkout", "-q", "-b", "polled")

            async def switched() -> bool:
                return bool((await p.workspaces.get(workspace.workspaceId)).branch == "polled")

            await until(switched, "the periodic pass to see the branch switch")

    asyncio.run(scenario())


async def live(reconciler: Any, head: Path) -> None:
    """Wait until the watch is in place: touch ``head`` (a watched file) until an event batch
    is reported. Touching changes no fact, so no record moves."""
    seen = reconciler.watcher.reported

    async def reported() -> bool:
        os.utime(head)
        return bool(reconciler.watcher.reported > seen)

    await until(reported, "the file watch to be in place")


def _async(predicate: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return predicate()

    return check
