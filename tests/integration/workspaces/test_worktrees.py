"""Paseo-owned worktrees over real Git repositories and a local bare remote."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import Conflict, InvalidParams

from paseo.worktrees.lifecycle import WorktreeSetupFailed
from paseo.worktrees.metadata import MetadataStore
from paseo.worktrees.model import WorktreeRequest

OpenEnv = Callable[[], Any]
Git = Callable[..., str]


def commit_paseo_json(repo: Path, git: Git, config: dict[str, Any]) -> None:
    (repo / "paseo.json").write_text(json.dumps(config))
    git(repo, "add", "paseo.json")
    git(repo, "commit", "-q", "-m", "paseo.json")


def test_three_creation_modes(open_env: OpenEnv, repos: Any, run_git: Git) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            main_head = run_git(repos.repo, "rev-parse", "main")

            off = await p.worktrees.create(WorktreeRequest(project_id=project.projectId))
            ws = off.workspace
            assert ws.branch is not None
            assert ws.branch.startswith("paseo/")
            assert (ws.kind, ws.isPaseoOwnedWorktree, ws.baseBranch) == ("worktree", True, "main")
            assert ws.mainRepoRoot == str(repos.repo)
            assert ws.cwd == ws.worktreeRoot
            assert ws.worktreeRoot is not None
            assert ws.worktreeRoot.startswith(str(env.home / "worktrees"))
            assert run_git(ws.cwd, "rev-parse", "HEAD") == main_head
            assert off.metadata.phase == "ready"

            existing = await p.worktrees.create(
                WorktreeRequest(
                    project_id=project.projectId, mode="checkout-branch", branch="feature"
                )
            )
            assert run_git(existing.workspace.cwd, "branch", "--show-current") == "feature"

            pr = await p.worktrees.create(
                WorktreeRequest(
                    project_id=project.projectId, mode="change-request", change_request=7
                )
            )
            assert pr.workspace.branch == "pr-7"
            assert run_git(pr.workspace.cwd, "rev-parse", "HEAD") == repos.pr_commit
            assert (Path(pr.workspace.cwd) / "CONTRIB.md").exists()

            listed = await p.worktrees.list()
            assert {row["workspaceId"] for row in listed} == {
                off.workspace.workspaceId,
                existing.workspace.workspaceId,
                pr.workspace.workspaceId,
            }

    asyncio.run(scenario())


def test_invalid_branch_is_refused_before_any_git_process(open_env: OpenEnv, repos: Any) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            for bad in ("a..b", "x.lock", "-flag", "has space", "end/", "HEAD", "a@{b", "a//b"):
                with pytest.raises(InvalidParams):
                    await p.worktrees.create(
                        WorktreeRequest(project_id=project.projectId, branch=bad)
                    )
            assert env.runner.processes_started == 0

    asyncio.run(scenario())


def test_subproject_inside_a_worktree(open_env: OpenEnv, repos: Any, run_git: Git) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            sub, _ = await p.projects.add(str(repos.repo / "packages" / "api"))
            created = await p.worktrees.create(
                WorktreeRequest(project_id=sub.projectId, branch="api-work")
            )
            ws = created.workspace
            assert ws.worktreeRoot is not None
            assert ws.cwd == os.path.join(ws.worktreeRoot, "packages", "api")
            assert ws.mainRepoRoot == str(repos.repo)
            assert ws.projectId == sub.projectId

            # Delete the checkout behind the daemon's back, archive, then restore: the
            # placement comes back from mainRepoRoot and the relative path to cwd.
            shutil.rmtree(ws.worktreeRoot)
            archived = await p.worktrees.archive(ws.workspaceId)
            assert archived.workspace.archivedAt is not None
            restored = await p.worktrees.restore(ws.workspaceId)
            assert restored.archivedAt is None
            assert (Path(restored.cwd) / "main.py").is_file()
            assert run_git(restored.cwd, "branch", "--show-current") == "api-work"
            assert (restored.cwd, restored.worktreeRoot) == (ws.cwd, ws.worktreeRoot)

    asyncio.run(scenario())


def test_archive_then_restore_recreates_the_checkout(
    open_env: OpenEnv, repos: Any, run_git: Git
) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            ws = (
                await p.worktrees.create(
                    WorktreeRequest(project_id=project.projectId, branch="topic")
                )
            ).workspace
            outcome = await p.worktrees.archive(ws.workspaceId)
            assert outcome.removed_checkout
            assert outcome.branch_deleted
            assert ws.worktreeRoot is not None
            assert not exists(ws.worktreeRoot)
            assert run_git(repos.repo, "branch", "--list", "topic") == ""
            restored = await p.worktrees.restore(ws.workspaceId)
            assert is_dir(restored.cwd)
            assert run_git(restored.cwd, "branch", "--show-current") == "topic"
            assert restored.baseBranch == "main"

    asyncio.run(scenario())


def test_archive_refuses_dirty_or_unpushed_work(
    open_env: OpenEnv, repos: Any, run_git: Git
) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            ws = (
                await p.worktrees.create(
                    WorktreeRequest(project_id=project.projectId, branch="wip")
                )
            ).workspace
            scratch = Path(ws.cwd) / "scratch.txt"
            scratch.write_text("unsaved\n")
            with pytest.raises(Conflict) as dirty:
                await p.worktrees.archive(ws.workspaceId)
            assert dirty.value.data["reason"] == "dirty"
            run_git(ws.cwd, "add", "-A")
            run_git(ws.cwd, "commit", "-q", "-m", "work in progress")
            with pytest.raises(Conflict) as unpushed:
                await p.worktrees.archive(ws.workspaceId)
            assert unpushed.value.data == {
                "path": ws.worktreeRoot,
                "reason": "unpushed",
                "commits": 1,
            }
            assert (await p.workspaces.get(ws.workspaceId)).archivedAt is None
            assert is_dir(ws.cwd)
            forced = await p.worktrees.archive(ws.workspaceId, force=True)
            assert forced.removed_checkout
            assert forced.branch_deleted

    asyncio.run(scenario())


def test_branch_deletion_is_compare_and_delete(open_env: OpenEnv, repos: Any, run_git: Git) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            ws = (
                await p.worktrees.create(
                    WorktreeRequest(project_id=project.projectId, branch="race")
                )
            ).workspace
            head = run_git(ws.cwd, "rev-parse", "HEAD")
            # A concurrent writer moves the branch after archive read it: the compare fails and
            # the branch, with its new commit, survives.
            run_git(ws.cwd, "commit", "-q", "--allow-empty", "-m", "late commit")
            late = run_git(ws.cwd, "rev-parse", "HEAD")
            assert not await p.worktrees._delete_branch(str(repos.repo), "race", head)
            assert run_git(repos.repo, "rev-parse", "refs/heads/race") == late

    asyncio.run(scenario())


def test_shared_backing_root_waits_for_its_last_reference(
    open_env: OpenEnv, repos: Any, run_git: Git
) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            first = (
                await p.worktrees.create(
                    WorktreeRequest(project_id=project.projectId, branch="shared")
                )
            ).workspace
            assert first.worktreeRoot is not None
            second, owner, _ = await p.workspaces.open_directory(
                os.path.join(first.worktreeRoot, "packages", "api")
            )
            assert owner.projectId == project.projectId
            assert second.worktreeRoot == first.worktreeRoot
            assert second.isPaseoOwnedWorktree
            assert second.kind == "worktree"

            one = await p.worktrees.archive(first.workspaceId)
            assert one.still_referenced_by == [second.workspaceId]
            assert not one.removed_checkout
            assert is_dir(first.worktreeRoot)
            two = await p.worktrees.archive(second.workspaceId)
            assert two.removed_checkout
            assert not exists(first.worktreeRoot)
            assert two.branch_deleted
            assert run_git(repos.repo, "branch", "--list", "shared") == ""

    asyncio.run(scenario())


def test_setup_runs_from_the_committed_base_with_paseo_env(
    open_env: OpenEnv, repos: Any, run_git: Git
) -> None:
    commit_paseo_json(
        repos.repo,
        run_git,
        {
            "worktree": {
                "setup": [
                    'echo "$PASEO_BRANCH_NAME|$PASEO_SOURCE_CHECKOUT_PATH|$PASEO_WORKTREE_PATH"'
                    " > setup.out",
                    'echo "$PASEO_PORT" > port.out',
                ],
                "teardown": 'echo torn > "$PASEO_SOURCE_CHECKOUT_PATH/teardown.out"',
            }
        },
    )
    # An uncommitted edit in the main checkout must not be what setup runs.
    (repos.repo / "paseo.json").write_text(json.dumps({"worktree": {"setup": "exit 9"}}))

    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            events: list[tuple[str, dict[str, Any]]] = []
            p.worktrees.publish = lambda method, payload: events.append((method, payload))
            project, _ = await p.projects.add(str(repos.repo))
            created = await p.worktrees.create(
                WorktreeRequest(project_id=project.projectId, branch="envy")
            )
            root = created.workspace.worktreeRoot
            assert root is not None
            content = (Path(created.workspace.cwd) / "setup.out").read_text().strip()
            assert content == f"envy|{repos.repo}|{root}"
            port = int((Path(created.workspace.cwd) / "port.out").read_text())
            assert port == created.metadata.port
            assert [r.exitCode for r in created.setup] == [0, 0]
            kinds = [e["event"]["type"] for m, e in events if m == "worktree.progress"]
            assert kinds.count("command_started") == 2
            assert "command_completed" in kinds
            (Path(root) / "setup.out").unlink()
            (Path(root) / "port.out").unlink()
            archived = await p.worktrees.archive(created.workspace.workspaceId)
            assert [r.exitCode for r in archived.teardown] == [0]
            assert (repos.repo / "teardown.out").read_text().strip() == "torn"

    asyncio.run(scenario())


def test_failing_setup_leaves_nothing_registered(
    open_env: OpenEnv, repos: Any, run_git: Git
) -> None:
    commit_paseo_json(
        repos.repo, run_git, {"worktree": {"setup": "echo preparing; echo broken >&2; exit 3"}}
    )

    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            with pytest.raises(WorktreeSetupFailed) as failure:
                await p.worktrees.create(
                    WorktreeRequest(project_id=project.projectId, branch="doomed")
                )
            assert "broken" in failure.value.message
            (result,) = failure.value.data["results"]
            assert (result["exitCode"], result["stdout"]) == (3, "preparing\n")
            assert await p.workspaces.list(include_archived=True) == []
            assert MetadataStore(str(env.home / "worktrees")).all() == []
            assert run_git(repos.repo, "branch", "--list", "doomed") == ""
            listing = run_git(repos.repo, "worktree", "list", "--porcelain")
            assert "doomed" not in listing

    asyncio.run(scenario())


def test_interrupted_creation_is_repaired_by_an_exact_retry(
    open_env: OpenEnv, repos: Any, run_git: Git
) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            project, _ = await p.projects.add(str(repos.repo))
            request = WorktreeRequest(project_id=project.projectId, branch="resume")
            first = await p.worktrees.create(request)
            # The state a crash leaves after `git worktree add`, before registration: the
            # checkout and branch exist, metadata says creating, no workspace record.
            metadata = MetadataStore(str(env.home / "worktrees"))
            metadata.save(first.metadata.model_copy(update={"phase": "creating"}))
            await env.store.workspaces.delete(first.workspace.workspaceId)

            retried = await p.worktrees.create(request)
            assert not retried.reused
            assert retried.metadata.phase == "ready"
            assert retried.workspace.workspaceId == first.workspace.workspaceId
            assert run_git(retried.workspace.cwd, "branch", "--show-current") == "resume"

            again = await p.worktrees.create(request)
            assert again.reused
            assert again.workspace.workspaceId == first.workspace.workspaceId

            with pytest.raises(Conflict, match="different request"):
                await p.worktrees.create(
                    WorktreeRequest(project_id=project.projectId, branch="resume", base="feature")
                )

    asyncio.run(scenario())


def is_dir(path: str | None) -> bool:
    return path is not None and os.path.isdir(path)


def exists(path: str | None) -> bool:
    return path is not None and os.path.exists(path)
