"""The worktree service: Paseo-owned Git worktrees and their lifecycle.

Creation (one of three modes) places a checkout at ``<worktrees.root>/<repo hash>/<slug>``:

* ``branch-off``: a new branch (named by the caller, else generated) from a base (default: the
  repository's default branch);
* ``checkout-branch``: an existing local branch, or a remote-tracking one of ``origin``;
* ``change-request``: ``refs/pull/<n>/head`` fetched from a remote onto a local branch.

Branch names are checked against Git's rules before any process runs. The sequence is durable
(:mod:`paseo.worktrees.metadata`): ``creating`` metadata, ``git worktree add``, cwd validation,
setup from the committed ``paseo.json`` of the base, workspace registration, ``ready``. A failed
step removes everything it created, so nothing half-created is registered; an interrupted run is
repaired by an exact retry.

Archive runs teardown from the workspace's exact cwd, marks the workspace archived and removes
the backing checkout only once no other active workspace uses it; unless forced it refuses a
checkout with uncommitted changes or commits found on no other branch or remote. The branch is
deleted with a compare-and-delete (``git update-ref -d <ref> <oid>``) so a commit that lands
meanwhile keeps it. Restore recreates the checkout from ``mainRepoRoot`` and the workspace's
relative path to ``cwd``.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.records import ProjectRecord, UntrustedSource, WorkspaceRecord
from paseo_hookspecs.records.ids import new_workspace_id

from paseo.config.models import ServicePortsConfig
from paseo.git.facts import (
    HEADS,
    default_branch,
    normalize_path,
    read_blob_at,
    read_facts,
    ref_oid,
    resolve_commitish,
)
from paseo.git.refname import validate_branch_name
from paseo.git.runner import GitRunner
from paseo.projects.common import Publish, no_publish, utc_now
from paseo.worktrees.checkout import (
    checked_cwd,
    fetch_head_oid,
    join_path,
    make_parent,
    raise_setup_failure,
    read_file,
    relative_cwd,
)
from paseo.worktrees.lifecycle import (
    CommandResult,
    ProgressCallback,
    WorktreeTeardownFailed,
    failure_message,
    run_commands,
    succeeded,
)
from paseo.worktrees.metadata import MetadataStore, WorktreeMetadata
from paseo.worktrees.model import (
    SLUG,
    ArchiveOutcome,
    CreateOutcome,
    WorktreeRequest,
    short_hash,
    slug_for,
)
from paseo.worktrees.ports import allocate_port
from paseo.worktrees.project_config import CONFIG_FILE, parse_project_config
from paseo.worktrees.recreate import recreate_checkout
from paseo.worktrees.registry import WorkspaceRegistry

BranchNamer = Callable[[str, str], Awaitable[str | None]]
"""``(description, cwd) -> branch name or None``."""


class WorktreeService:
    """See the module docstring."""

    def __init__(
        self,
        workspaces: WorkspaceRegistry,
        git: GitRunner,
        *,
        worktrees_root: Callable[[], str],
        service_ports: Callable[[], ServicePortsConfig | None] = lambda: None,
        publish: Publish = no_publish,
        branch_namer: BranchNamer | None = None,
        before_archive: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.workspaces = workspaces
        self.projects = workspaces.projects
        self.git = git
        self.worktrees_root = worktrees_root
        self.service_ports = service_ports
        self.publish = publish
        self._locks: dict[str, asyncio.Lock] = {}
        self._branch_namer = branch_namer
        """Generates a branch name from a description (the metadata service)."""
        self._before_archive = before_archive
        """Awaited with a workspace id before it is archived: what runs in it stops first."""

    def _metadata(self) -> MetadataStore:
        return MetadataStore(self.worktrees_root())

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    def _progress(
        self, wt_id: str, phase: str, meta: WorktreeMetadata | None = None
    ) -> ProgressCallback:
        ids: dict[str, Any] = {"worktreeId": wt_id, "workspaceId": wt_id}
        if meta is not None:  # a new worktree: the workspace it becomes, where, which branch
            ids.update(workspaceId=meta.workspaceId, path=meta.worktreePath, branch=meta.branch)

        def send(event: dict[str, Any]) -> None:
            self.publish("worktree.progress", {**ids, "phase": phase, "event": event})

        return send

    # ------------------------------------------------------------- creation

    async def create(self, request: WorktreeRequest) -> CreateOutcome:
        """Create (or repair, or reuse) a worktree and its workspace; see the module docs."""
        plan = await self._plan(request)
        async with self._lock(plan["id"]):
            return await self._create_locked(request, plan)

    async def _plan(self, request: WorktreeRequest) -> dict[str, Any]:
        """Validate the request and derive names, all before any process runs."""
        project = await self.projects.get_active(request.project_id)
        facts = await asyncio.to_thread(read_facts, project.rootPath)
        if facts is None:
            raise InvalidParams(
                f"project {project.projectId} ({project.rootPath}) is not in a Git repository",
                data={"projectId": project.projectId},
            )
        repo_root = facts.main_repo_root
        if request.mode == "branch-off":
            branch = (
                request.branch
                or await self._generated_branch(request, project.rootPath, repo_root)
                or f"paseo/{secrets.token_hex(4)}"
            )
        elif request.mode == "checkout-branch":
            if not request.branch:
                raise InvalidParams("checkout-branch needs a branch")
            branch = request.branch
        else:
            if request.change_request is None or request.change_request <= 0:
                raise InvalidParams("change-request needs a positive change request number")
            branch = request.branch or f"pr-{request.change_request}"
        validate_branch_name(branch)
        if request.base is not None:
            validate_branch_name(request.base.removeprefix("refs/heads/"))
        if request.remote.startswith("-") or not request.remote:
            raise InvalidParams(f"invalid remote name {request.remote!r}")
        slug = request.slug or slug_for(branch)
        if not SLUG.match(slug):
            raise InvalidParams(
                f"invalid worktree slug {slug!r}: letters, digits, '.', '_' and '-' only"
            )
        relative = relative_cwd(request.relative_cwd, project.rootPath, facts.toplevel)
        repo_hash = short_hash(repo_root)
        request_hash = hashlib.sha256(
            json.dumps(
                {
                    "projectId": project.projectId,
                    "repoRoot": repo_root,
                    "mode": request.mode,
                    "branch": branch if request.branch or request.mode != "branch-off" else None,
                    "base": request.base,
                    "changeRequest": request.change_request,
                    "remote": request.remote,
                    "relativeCwd": relative,
                },
                sort_keys=True,
            ).encode()
        ).hexdigest()
        return {
            "id": f"{repo_hash}-{slug}",
            "project": project,
            "repo_root": repo_root,
            "branch": branch,
            "slug": slug,
            "relative": relative,
            "path": join_path(normalize_path(self.worktrees_root()), repo_hash, slug),
            "request_hash": request_hash,
        }

    async def _generated_branch(
        self, request: WorktreeRequest, cwd: str, repo_root: str
    ) -> str | None:
        """A generated name for a new branch, or ``None`` (nothing to name it from, no
        generator, or generation failed). A name already taken gets a random suffix."""
        description = request.prompt or request.title
        if self._branch_namer is None or not description:
            return None
        name = await self._branch_namer(description, cwd)
        if name is None:
            return None
        if await asyncio.to_thread(ref_oid, repo_root, f"{HEADS}{name}") is not None:
            name = f"{name}-{secrets.token_hex(2)}"
        return name

    async def _create_locked(self, request: WorktreeRequest, plan: dict[str, Any]) -> CreateOutcome:
        store = self._metadata()
        worktree_id: str = plan["id"]
        project: ProjectRecord = plan["project"]
        path: str = plan["path"]
        existing = await asyncio.to_thread(store.load, worktree_id)
        if existing is not None:
            if existing.requestHash != plan["request_hash"]:
                raise Conflict(
                    f"worktree {plan['slug']!r} already exists for a different request",
                    data={"worktreeId": worktree_id, "path": existing.worktreePath},
                )
            if existing.phase == "ready":
                workspace = await self.workspaces.store.workspaces.get(existing.workspaceId)
                if workspace is not None and await asyncio.to_thread(
                    os.path.isdir, existing.worktreePath
                ):
                    return CreateOutcome(workspace, existing, reused=True)
            # Interrupted (or its checkout vanished): remove what it left, then redo.
            await self._discard(existing)
            workspace_id = existing.workspaceId
        else:
            if await asyncio.to_thread(os.path.lexists, path):
                raise Conflict(
                    f"{path} exists but is not a worktree Paseo is creating", data={"path": path}
                )
            workspace_id = new_workspace_id()
        repo_root: str = plan["repo_root"]
        branch: str = plan["branch"]
        base_ref, base_commit, created_branch, add_args, base_label = await self._resolve_source(
            request, repo_root, branch, path
        )
        now = utc_now()
        metadata = WorktreeMetadata(
            id=worktree_id,
            phase="creating",
            requestHash=plan["request_hash"],
            workspaceId=workspace_id,
            projectId=project.projectId,
            repoRoot=repo_root,
            worktreePath=path,
            relativeCwd=plan["relative"],
            branch=branch,
            createdBranch=created_branch,
            baseRef=base_ref,
            baseCommit=base_commit,
            createdAt=existing.createdAt if existing else now,
            updatedAt=now,
        )
        await asyncio.to_thread(store.save, metadata)
        try:
            await asyncio.to_thread(make_parent, path)
            await self.git.run(["worktree", "add", *add_args], cwd=repo_root, timeout=300)
            cwd = await asyncio.to_thread(checked_cwd, path, plan["relative"])
            port = await self._port(path, branch, repo_root, worktree_id)
            metadata = metadata.model_copy(update={"port": port})
            await asyncio.to_thread(store.save, metadata)
            results: list[CommandResult] = []
            untrusted = (
                UntrustedSource(
                    kind="change_request",
                    forge="github",
                    number=request.change_request,
                    headRepository=request.head_repository,
                )
                if request.mode == "change-request"
                and request.head_repository
                and request.change_request
                else None
            )
            # A fork's paseo.json is someone else's code: nothing of it runs until trusted.
            if request.run_setup and untrusted is None:
                config = parse_project_config(
                    await asyncio.to_thread(read_blob_at, repo_root, base_commit, CONFIG_FILE),
                    path=f"{os.path.join(repo_root, CONFIG_FILE)} (at {base_commit[:12]})",
                )
                if config.setup:
                    results = await run_commands(
                        config.setup,
                        cwd=cwd,
                        env=self._env(repo_root, path, branch, port),
                        on_event=self._progress(worktree_id, "setup", metadata),
                    )
                    raise_setup_failure(results, worktree_id)
            workspace = await self.workspaces.register_worktree(
                workspace_id=workspace_id,
                project=project,
                cwd=cwd,
                worktree_root=path,
                main_repo_root=repo_root,
                branch=branch,
                base_branch=base_label,
                display_name=plan["slug"],
                title=request.title,
                untrusted_source=untrusted,
            )
            metadata = metadata.model_copy(update={"phase": "ready", "updatedAt": utc_now()})
            await asyncio.to_thread(store.save, metadata)
        except BaseException:
            await asyncio.shield(self._discard(metadata))
            raise
        return CreateOutcome(workspace, metadata, reused=False, setup=results)

    async def _resolve_source(
        self, request: WorktreeRequest, repo_root: str, branch: str, path: str
    ) -> tuple[str | None, str, bool, list[str], str | None]:
        """``(base ref, start commit, branch created?, git worktree add args, baseBranch)``."""
        existing_branch = await asyncio.to_thread(ref_oid, repo_root, HEADS + branch)
        if request.mode == "branch-off":
            if existing_branch is not None:
                raise Conflict(
                    f"branch {branch!r} already exists; check it out instead",
                    data={"branch": branch},
                )
            base = request.base or await asyncio.to_thread(default_branch, repo_root)
            if base is None:
                raise InvalidParams("the repository has no default branch; name a base")
            resolved = await asyncio.to_thread(resolve_commitish, repo_root, base)
            if resolved is None:
                raise InvalidParams(f"unknown base {base!r}", data={"base": base})
            ref, oid = resolved
            label = ref.removeprefix(HEADS) if ref.startswith(HEADS) else ref.removeprefix("refs/")
            return ref, oid, True, ["--no-track", "-b", branch, path, oid], label
        if request.mode == "checkout-branch":
            if existing_branch is not None:
                return HEADS + branch, existing_branch, False, [path, branch], request.base
            remote_ref = f"refs/remotes/{request.remote}/{branch}"
            resolved = await asyncio.to_thread(resolve_commitish, repo_root, remote_ref)
            if resolved is None:
                raise NotFound(f"unknown branch {branch!r}", data={"branch": branch})
            _ref, oid = resolved
            return remote_ref, oid, True, ["--track", "-b", branch, path, remote_ref], request.base
        if existing_branch is not None:
            raise Conflict(
                f"branch {branch!r} already exists; name another local branch",
                data={"branch": branch},
            )
        number = request.change_request
        await self.git.run(
            ["fetch", "--no-tags", request.remote, f"refs/pull/{number}/head"],
            cwd=repo_root,
            timeout=300,
        )
        oid = await asyncio.to_thread(fetch_head_oid, repo_root)
        base = request.base or await asyncio.to_thread(default_branch, repo_root)
        return f"refs/pull/{number}/head", oid, True, ["--no-track", "-b", branch, path, oid], base

    async def _port(self, path: str, branch: str, repo_root: str, worktree_id: str) -> int:
        taken = {
            m.port
            for m in await asyncio.to_thread(self._metadata().all)
            if m.port is not None and m.id != worktree_id
        }
        env = {
            "PASEO_SOURCE_CHECKOUT_PATH": repo_root,
            "PASEO_WORKTREE_PATH": path,
            "PASEO_BRANCH_NAME": branch,
        }
        return await allocate_port(self.service_ports(), taken=taken, env=env, cwd=path)

    @staticmethod
    def _env(repo_root: str, path: str, branch: str | None, port: int | None) -> dict[str, str]:
        env = {
            "PASEO_SOURCE_CHECKOUT_PATH": repo_root,
            "PASEO_ROOT_PATH": repo_root,
            "PASEO_WORKTREE_PATH": path,
            "PASEO_BRANCH_NAME": branch or "",
        }
        if port is not None:
            env["PASEO_PORT"] = str(port)
            env["PASEO_WORKTREE_PORT"] = str(port)
        return env

    async def _discard(self, metadata: WorktreeMetadata) -> None:
        """Remove everything a (failed or interrupted) creation left: the workspace record,
        the checkout, a branch it created that still points at its start, the metadata."""
        if await self.workspaces.store.workspaces.delete(metadata.workspaceId):
            self.publish("workspace.removed", {"workspaceId": metadata.workspaceId})
        await self._remove_checkout(metadata.repoRoot, metadata.worktreePath)
        if metadata.createdBranch and metadata.branch and metadata.baseCommit:
            await self._delete_branch(metadata.repoRoot, metadata.branch, metadata.baseCommit)
        await asyncio.to_thread(self._metadata().delete, metadata.id)

    async def _remove_checkout(self, repo_root: str, path: str) -> None:
        """``git worktree remove`` (falling back to deleting the directory), then prune."""
        repo_present = await asyncio.to_thread(os.path.isdir, repo_root)
        if repo_present and await asyncio.to_thread(os.path.lexists, path):
            await self.git.run(
                ["worktree", "remove", "--force", "--force", path],
                cwd=repo_root,
                check=False,
                timeout=120,
            )
        if await asyncio.to_thread(os.path.lexists, path):
            await asyncio.to_thread(shutil.rmtree, path, True)
        if repo_present:
            await self.git.run(["worktree", "prune"], cwd=repo_root, check=False)

    async def _delete_branch(self, repo_root: str, branch: str, expected: str) -> bool:
        """Delete ``branch`` only while it still points at ``expected``."""
        if not await asyncio.to_thread(os.path.isdir, repo_root):
            return False
        result = await self.git.run(
            ["update-ref", "-d", HEADS + branch, expected], cwd=repo_root, check=False
        )
        return result.ok

    # ---------------------------------------------------------------- listing

    async def list(self, *, project_id: str | None = None) -> list[dict[str, Any]]:
        """Managed worktrees with their workspace, newest metadata first."""
        rows: builtins.list[dict[str, Any]] = []
        for meta in await asyncio.to_thread(self._metadata().all):
            if project_id is not None and meta.projectId != project_id:
                continue
            workspace = await self.workspaces.store.workspaces.get(meta.workspaceId)
            rows.append(
                {
                    "id": meta.id,
                    "phase": meta.phase,
                    "path": meta.worktreePath,
                    "branch": meta.branch,
                    "baseRef": meta.baseRef,
                    "projectId": meta.projectId,
                    "workspaceId": meta.workspaceId,
                    "cwd": workspace.cwd if workspace else None,
                    "archived": workspace.archivedAt is not None if workspace else None,
                    "port": meta.port,
                    "createdAt": meta.createdAt,
                }
            )
        return rows

    # ---------------------------------------------------------------- archive

    async def archive(self, workspace_id: str, *, force: bool = False) -> ArchiveOutcome:
        """Archive a workspace; for a Paseo-owned worktree also tear it down (module docs)."""
        workspace = await self.workspaces.get(workspace_id)
        if workspace.archivedAt is not None:
            return ArchiveOutcome(workspace)
        root = workspace.worktreeRoot
        if self._before_archive is not None:
            await self._before_archive(workspace_id)
        if not workspace.isPaseoOwnedWorktree or root is None:
            return ArchiveOutcome(await self.workspaces.mark_archived(workspace_id))
        async with self._lock(f"root:{normalize_path(root)}"):
            others = await self.workspaces.active_references(root, excluding=workspace_id)
            exists = await asyncio.to_thread(os.path.isdir, root)
            head: str | None = None
            if exists and not others:
                head = await asyncio.to_thread(ref_oid, root, "HEAD")
                if not force:
                    await self._refuse_losing_work(root, workspace.branch)
            teardown: builtins.list[CommandResult] = []
            if await asyncio.to_thread(os.path.isdir, workspace.cwd):
                teardown = await self._teardown(workspace, force=force)
            archived = await self.workspaces.mark_archived(workspace_id)
            outcome = ArchiveOutcome(archived, teardown, still_referenced_by=others)
            if others:
                return outcome
            main = workspace.mainRepoRoot or root
            if exists:
                await self._remove_checkout(main, root)
                outcome.removed_checkout = True
            if workspace.branch and head is not None:
                outcome.branch_deleted = await self._delete_branch(main, workspace.branch, head)
            for meta in await asyncio.to_thread(self._metadata().all):
                if meta.workspaceId == workspace_id:
                    await asyncio.to_thread(self._metadata().delete, meta.id)
            return outcome

    async def _refuse_losing_work(self, root: str, branch: str | None) -> None:
        status = await self.git.run(["status", "--porcelain"], cwd=root)
        if status.stdout.strip():
            raise Conflict(
                f"{root} has uncommitted changes; commit them or archive with --force",
                data={"path": root, "reason": "dirty", "status": status.stdout[:4000]},
            )
        exclude = [f"--exclude={branch}"] if branch else []
        count = await self.git.run(
            ["rev-list", "--count", "HEAD", "--not", *exclude, "--branches", "--remotes"],
            cwd=root,
        )
        unpushed = int(count.stdout.strip() or "0")
        if unpushed:
            raise Conflict(
                f"{root} has {unpushed} commit(s) on no other branch or remote; push them or "
                "archive with --force",
                data={"path": root, "reason": "unpushed", "commits": unpushed},
            )

    async def _teardown(
        self, workspace: WorkspaceRecord, *, force: bool
    ) -> builtins.list[CommandResult]:
        root = workspace.worktreeRoot or workspace.cwd
        head = await asyncio.to_thread(ref_oid, root, "HEAD")
        data = await asyncio.to_thread(read_blob_at, root, head, CONFIG_FILE) if head else None
        if data is None:
            data = await asyncio.to_thread(read_file, os.path.join(root, CONFIG_FILE))
        config = parse_project_config(data)
        if not config.teardown:
            return []
        port = next(
            (
                m.port
                for m in await asyncio.to_thread(self._metadata().all)
                if m.workspaceId == workspace.workspaceId
            ),
            None,
        )
        results = await run_commands(
            config.teardown,
            cwd=workspace.cwd,
            env=self._env(workspace.mainRepoRoot or root, root, workspace.branch, port),
            on_event=self._progress(workspace.workspaceId, "teardown"),
        )
        if not succeeded(results) and not force:
            raise WorktreeTeardownFailed(
                failure_message("teardown", results),
                data={"results": [r.to_json() for r in results]},
            )
        return results

    # ------------------------------------------------------------------ trust

    async def trust(
        self, workspace_id: str, *, run_setup: bool = True
    ) -> tuple[WorkspaceRecord, builtins.list[CommandResult]]:
        """Allow an ``untrustedSource`` workspace's automation and run the setup it skipped
        (from its committed HEAD's ``paseo.json``)."""
        workspace = await self.workspaces.get(workspace_id)
        if workspace.untrustedSource is None:
            return workspace, []
        results: builtins.list[CommandResult] = []
        root = workspace.worktreeRoot or workspace.cwd
        if run_setup and workspace.archivedAt is None:
            head = await asyncio.to_thread(ref_oid, root, "HEAD")
            config = parse_project_config(
                await asyncio.to_thread(read_blob_at, root, head, CONFIG_FILE) if head else None,
                path=os.path.join(root, CONFIG_FILE),
            )
            if config.setup:
                port = next(
                    (
                        m.port
                        for m in await asyncio.to_thread(self._metadata().all)
                        if m.workspaceId == workspace_id
                    ),
                    None,
                )
                results = await run_commands(
                    config.setup,
                    cwd=workspace.cwd,
                    env=self._env(workspace.mainRepoRoot or root, root, workspace.branch, port),
                    on_event=self._progress(workspace_id, "setup"),
                )
                raise_setup_failure(results, workspace_id)
        return await self.workspaces.mark_trusted(workspace_id), results

    # ---------------------------------------------------------------- restore

    async def restore(self, workspace_id: str, *, run_setup: bool = True) -> WorkspaceRecord:
        """Unarchive a workspace, recreating a deleted Paseo-owned checkout first."""
        workspace = await self.workspaces.get(workspace_id)
        if workspace.archivedAt is None:
            return workspace
        root = workspace.worktreeRoot
        if not workspace.isPaseoOwnedWorktree or root is None:
            if not await asyncio.to_thread(os.path.isdir, workspace.cwd):
                raise Conflict(f"{workspace.cwd} no longer exists", data={"cwd": workspace.cwd})
            return await self.workspaces.mark_restored(workspace_id)
        async with self._lock(f"root:{normalize_path(root)}"):
            if not await asyncio.to_thread(os.path.isdir, root):
                await recreate_checkout(
                    self.git,
                    workspace,
                    root,
                    run_setup=run_setup,
                    env=self._env,
                    progress=self._progress,
                    remove_checkout=self._remove_checkout,
                    delete_branch=self._delete_branch,
                )
            elif not await asyncio.to_thread(os.path.isdir, workspace.cwd):
                await asyncio.to_thread(os.makedirs, workspace.cwd, exist_ok=True)
            return await self.workspaces.mark_restored(workspace_id)
