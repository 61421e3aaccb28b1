"""Projects and workspaces over a real json store and real Git repositories."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import AccessDenied, Conflict, InvalidParams
from paseo_hookspecs.records.ids import PROJECT_ID_PATTERN, WORKSPACE_ID_PATTERN

OpenEnv = Callable[[], Any]


def test_opening_a_root_twice_is_idempotent(open_env: OpenEnv, repos: Any) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            first, created = await p.projects.add(str(repos.repo))
            again, created_again = await p.projects.add(str(repos.repo) + "/")
            assert created
            assert not created_again
            assert again.projectId == first.projectId
            assert PROJECT_ID_PATTERN.match(first.projectId)
            assert first.kind == "git"
            assert first.projectKey == f"remote:{repos.remote.with_suffix('')}"
            ws1, project1, c1 = await p.workspaces.open_directory(str(repos.repo))
            ws2, _project2, c2 = await p.workspaces.open_directory(str(repos.repo))
            assert c1
            assert not c2
            assert ws1.workspaceId == ws2.workspaceId
            assert WORKSPACE_ID_PATTERN.match(ws1.workspaceId)
            assert project1.projectId == first.projectId
            assert (ws1.kind, ws1.branch, ws1.worktreeRoot) == (
                "local_checkout",
                "main",
                str(repos.repo),
            )
            # Concurrent opens of a fresh directory agree on one workspace.
            sub = repos.repo / "packages"
            results = await asyncio.gather(
                *(p.workspaces.open_directory(str(sub)) for _ in range(5))
            )
            assert len({w.workspaceId for w, _, _ in results}) == 1

    asyncio.run(scenario())


def test_symlinked_root_is_kept_lexically(open_env: OpenEnv, repos: Any, tmp_path: Path) -> None:
    link = tmp_path / "link-to-repo"
    link.symlink_to(repos.repo)

    async def scenario() -> None:
        async with open_env() as env:
            project, _ = await env.placement.projects.add(str(link))
            assert project.rootPath == str(link)
            assert project.displayName == "link-to-repo"

    asyncio.run(scenario())


def test_archived_root_is_not_resurrected(open_env: OpenEnv, repos: Any) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            projects = env.placement.projects
            old, _ = await projects.add(str(repos.repo))
            await projects.archive(old.projectId)
            new, created = await projects.add(str(repos.repo))
            assert created
            assert new.projectId != old.projectId
            assert (await projects.get(old.projectId)).archivedAt is not None

    asyncio.run(scenario())


def test_legacy_ids_are_kept_and_project_keys_backfilled(
    open_env: OpenEnv, repos: Any, paseo_home: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    legacy = [
        {
            "projectId": "remote:github.com/acme/repo",
            "rootPath": str(repos.repo),
            "kind": "git",
            "displayName": "repo",
            "createdAt": "2025-01-01T00:00:00.000Z",
            "updatedAt": "2025-01-01T00:00:00.000Z",
            "archivedAt": None,
        },
        {
            "projectId": str(plain),
            "rootPath": str(plain),
            "kind": "non_git",
            "displayName": "plain",
            "createdAt": "2025-01-01T00:00:00.000Z",
            "updatedAt": "2025-01-01T00:00:00.000Z",
            "archivedAt": None,
        },
    ]
    (paseo_home / "projects").mkdir(parents=True)
    (paseo_home / "projects" / "projects.json").write_text(json.dumps(legacy))

    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            await p.reconciler.start()
            by_id = {x.projectId: x for x in await p.projects.list()}
            assert set(by_id) == {"remote:github.com/acme/repo", str(plain)}
            assert by_id["remote:github.com/acme/repo"].projectKey == (
                f"remote:{repos.remote.with_suffix('')}"
            )
            assert by_id[str(plain)].projectKey == str(plain)
            # Opening the legacy root is idempotent: no new project, no rekeying.
            project, created = await p.projects.add(str(repos.repo))
            assert not created
            assert project.projectId == "remote:github.com/acme/repo"
            workspace, owner, _ = await p.workspaces.open_directory(str(repos.repo / "packages"))
            assert owner.projectId == "remote:github.com/acme/repo"
            assert workspace.projectId == "remote:github.com/acme/repo"

    asyncio.run(scenario())


def test_bad_paths_are_refused_and_nothing_is_written(
    open_env: OpenEnv, tmp_path: Path, paseo_home: Path
) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")

    async def scenario() -> None:
        async with open_env() as env:
            ws = env.placement.workspaces
            with pytest.raises(InvalidParams, match="does not exist"):
                await ws.open_directory(str(tmp_path / "missing"))
            with pytest.raises(InvalidParams, match="not a directory"):
                await ws.open_directory(str(a_file))
            with pytest.raises(InvalidParams, match="absolute"):
                await ws.open_directory("relative/dir")
            inside = paseo_home / "runtime"
            inside.mkdir(parents=True, exist_ok=True)
            with pytest.raises(AccessDenied, match="state root"):
                await ws.open_directory(str(inside))
            with pytest.raises(AccessDenied):
                await ws.open_directory(str(tmp_path), session_kind="remote")
            assert await env.placement.projects.list(include_archived=True) == []

    asyncio.run(scenario())
    assert not (paseo_home / "projects" / "projects.json").exists()
    assert not (paseo_home / "projects" / "workspaces.json").exists()


def test_reconciliation_follows_branch_and_remote_changes(
    open_env: OpenEnv, repos: Any, run_git: Callable[..., str], tmp_path: Path
) -> None:
    empty = tmp_path / "empty-project"
    empty.mkdir()

    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            workspace, project, _ = await p.workspaces.open_directory(str(repos.repo))
            await p.workspaces.rename(workspace.workspaceId, "My title")
            bare, _ = await p.projects.add(str(empty))
            await p.reconciler.reconcile_once(force=True)
            quiet = await p.reconciler.reconcile_once()
            assert quiet.read == 0
            assert quiet.updated == []

            run_git(repos.repo, "checkout", "-q", "-b", "topic")
            stats = await p.reconciler.reconcile_once()
            assert workspace.workspaceId in stats.updated
            after = await p.workspaces.get(workspace.workspaceId)
            assert after.branch == "topic"
            assert (after.displayName, after.title, after.cwd, after.projectId) == (
                "repo",
                "My title",
                workspace.cwd,
                workspace.projectId,
            )
            assert after.updatedAt >= workspace.updatedAt

            run_git(repos.repo, "remote", "set-url", "origin", "git@github.com:Acme/Moved.git")
            await p.reconciler.reconcile_once()
            moved = await p.projects.get(project.projectId)
            assert moved.projectKey == "remote:github.com/Acme/Moved"
            assert (moved.projectId, moved.rootPath, moved.displayName) == (
                project.projectId,
                project.rootPath,
                project.displayName,
            )

            # An empty project is observed too: it becomes a Git project when one appears.
            run_git(empty, "init", "-q")
            await p.reconciler.reconcile_once()
            assert (await p.projects.get(bare.projectId)).kind == "git"
            assert env.runner.processes_started == 0

    asyncio.run(scenario())


def test_orphaned_workspaces_are_hidden_then_removed(open_env: OpenEnv, repos: Any) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            workspace, project, _ = await p.workspaces.open_directory(str(repos.repo))
            await env.store.projects.delete(project.projectId)
            assert await p.workspaces.list() == []
            assert await env.store.workspaces.get(workspace.workspaceId) is not None
            again, new_project, created = await p.workspaces.open_directory(str(repos.repo))
            assert created
            assert again.workspaceId != workspace.workspaceId
            assert new_project.projectId != project.projectId
            assert await env.store.workspaces.get(workspace.workspaceId) is None

    asyncio.run(scenario())


def test_labels_rename_and_delete_rewrite_assignments(open_env: OpenEnv, repos: Any) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            p = env.placement
            a, _, _ = await p.workspaces.open_directory(str(repos.repo))
            b, _, _ = await p.workspaces.open_directory(str(repos.repo / "packages"))
            await p.labels.create("Needs  Review", "red")
            await p.labels.create("urgent", "amber")
            for ws in (a, b):
                await p.labels.assign(ws.workspaceId, ["needs review", "urgent"])
            assert (await p.workspaces.get(a.workspaceId)).labels == ["Needs Review", "urgent"]
            with pytest.raises(Conflict):
                await p.labels.edit("urgent", new_name="NEEDS REVIEW")
            await p.labels.edit("Needs Review", new_name="Reviewing")
            for ws in (a, b):
                assert (await p.workspaces.get(ws.workspaceId)).labels == ["Reviewing", "urgent"]
            await p.labels.edit("urgent", color="teal")
            await p.labels.delete("reviewing")
            for ws in (a, b):
                assert (await p.workspaces.get(ws.workspaceId)).labels == ["urgent"]
            assert [(x.name, x.color) for x in await p.labels.list()] == [("urgent", "teal")]

    asyncio.run(scenario())


def test_pin_and_title_leave_names_alone(open_env: OpenEnv, repos: Any) -> None:
    async def scenario() -> None:
        async with open_env() as env:
            ws = env.placement.workspaces
            workspace, _, _ = await ws.open_directory(str(repos.repo))
            pinned = await ws.pin(workspace.workspaceId, True)
            assert pinned.pinnedAt is not None
            titled = await ws.rename(workspace.workspaceId, "  Day job ")
            assert (titled.title, titled.displayName) == ("Day job", "repo")
            with pytest.raises(Conflict):
                await ws.update(workspace.workspaceId, {"displayName": "x"})
            cleared = await ws.rename(workspace.workspaceId, None)
            assert cleared.title is None
            assert is_dir(cleared.cwd)

    asyncio.run(scenario())


def is_dir(path: str | None) -> bool:
    return path is not None and os.path.isdir(path)


def exists(path: str | None) -> bool:
    return path is not None and os.path.exists(path)
