"""The workspace registry's single entry point: :class:`WorkspaceProvisioningService`.

Directory opens, agent imports and worktree creation all create workspace records here, so
placement is defined once:

* ``cwd`` is the exact execution directory; ``worktreeRoot`` the backing checkout root (they
  differ for a subproject inside a checkout); ``mainRepoRoot`` the main repository of a linked
  worktree.
* ``displayName`` (derived at creation) and ``baseBranch`` are preserved by every update;
  ``title`` is the user's override and ``branch`` is tracked separately from any name.
* Reconciliation may refresh mutable placement facts (``kind``, ``branch``, ``worktreeRoot``,
  ``mainRepoRoot``) but never ``projectId``, ``cwd``, ``displayName`` or ``baseBranch``
  (:data:`RECONCILABLE_FIELDS`).
* Read-only listings omit orphaned rows (a workspace whose project record is missing); mutation
  paths remove them instead of treating them as valid.

The agent manager stamps every agent with a workspace through
:meth:`WorkspaceProvisioningService.ensure_workspace_for_cwd`.
"""

from __future__ import annotations

import asyncio
import builtins
import os
from collections.abc import Callable
from typing import Any

from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import ProjectRecord, UntrustedSource, WorkspaceRecord, dump_record
from paseo_hookspecs.records.ids import new_workspace_id

from paseo.git.facts import RepoFacts, normalize_path, read_facts
from paseo.projects.common import PAGE, Publish, collect, no_publish, utc_now
from paseo.projects.paths import check_openable, is_within
from paseo.projects.service import ProjectRegistry

RECONCILABLE_FIELDS = frozenset({"kind", "branch", "worktreeRoot", "mainRepoRoot"})
"""The only fields reconciliation may change (plus ``updatedAt`` when one of them does)."""

PRESERVED_FIELDS = frozenset({"projectId", "cwd", "displayName", "baseBranch"})
"""Fields no update after creation rewrites (titles and labels have their own methods)."""


def placement(facts: RepoFacts | None) -> dict[str, Any]:
    """The mutable placement facts a checkout implies for a workspace."""
    if facts is None:
        return {"kind": "directory", "branch": None}
    if facts.is_linked_worktree:
        return {
            "kind": "worktree",
            "branch": facts.branch,
            "worktreeRoot": facts.toplevel,
            "mainRepoRoot": facts.main_repo_root,
        }
    return {"kind": "local_checkout", "branch": facts.branch, "worktreeRoot": facts.toplevel}


class WorkspaceProvisioningService:
    """Creates, lists and updates workspace records (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        projects: ProjectRegistry,
        *,
        state_root: str,
        worktrees_root: Callable[[], str],
        publish: Publish = no_publish,
    ) -> None:
        self.store = store
        self.projects = projects
        self.state_root = state_root
        self.worktrees_root = worktrees_root
        self.publish = publish
        # Placement decisions (find-or-create) are serialized so two concurrent opens of one
        # directory cannot create two workspaces.
        self._placement_lock = asyncio.Lock()

    def announce(self, workspace: WorkspaceRecord) -> None:
        """Publish ``workspace.changed`` for ``workspace``."""
        self.publish("workspace.changed", {"workspace": dump_record(workspace)})

    # ------------------------------------------------------------------ paths

    async def check_path(self, raw: str, *, session_kind: str = "local") -> str:
        """``raw`` normalized, if the caller may open it (see :mod:`paseo.projects.paths`)."""
        roots = [p.rootPath for p in await self.projects.list()]
        return await asyncio.to_thread(
            check_openable,
            raw,
            state_root=self.state_root,
            worktrees_root=self.worktrees_root(),
            session_kind=session_kind,
            project_roots=roots,
        )

    # ------------------------------------------------------------------ reads

    async def _all(
        self, *, include_archived: bool, project_id: str | None = None, cwd: str | None = None
    ) -> list[WorkspaceRecord]:
        return await collect(
            lambda cursor: self.store.workspaces.list(
                project_id=project_id,
                include_archived=include_archived,
                cwd=cwd,
                cursor=cursor,
                limit=PAGE,
            )
        )

    async def list(
        self, *, project_id: str | None = None, include_archived: bool = False
    ) -> builtins.list[WorkspaceRecord]:
        """Workspaces (of one project), omitting orphans whose project record is missing."""
        known = {p.projectId for p in await self.projects.list(include_archived=True)}
        rows = await self._all(include_archived=include_archived, project_id=project_id)
        return [row for row in rows if row.projectId in known]

    async def get(self, workspace_id: str) -> WorkspaceRecord:
        """The workspace, or :class:`NotFound` (also for an orphan, which is removed)."""
        workspace = await self.store.workspaces.get(workspace_id)
        if workspace is None:
            raise NotFound(
                f"workspace {workspace_id} not found", data={"workspaceId": workspace_id}
            )
        if await self.store.projects.get(workspace.projectId) is None:
            await self._remove_orphan(workspace)
            raise NotFound(
                f"workspace {workspace_id} belonged to a project that no longer exists; "
                "its record was removed",
                data={"workspaceId": workspace_id},
            )
        return workspace

    async def _remove_orphan(self, workspace: WorkspaceRecord) -> None:
        if await self.store.workspaces.delete(workspace.workspaceId):
            self.publish("workspace.removed", {"workspaceId": workspace.workspaceId})

    # ------------------------------------------------------------- creation

    async def open_directory(
        self,
        path: str,
        *,
        project_id: str | None = None,
        title: str | None = None,
        session_kind: str = "local",
    ) -> tuple[WorkspaceRecord, ProjectRecord, bool]:
        """The workspace of directory ``path`` (validated), creating it and its project when
        needed; returns ``(workspace, project, created)``.

        An explicit ``project_id`` naming an active project is authoritative. Otherwise an
        active workspace with exactly this cwd is returned as is; a new one joins the active
        project whose root contains the directory (for a linked worktree, the project of its
        main repository), else a project allocated for the directory itself (for a linked
        worktree, for its main repository).
        """
        cwd = await self.check_path(path, session_kind=session_kind)
        return await self._provision(cwd, project_id=project_id, title=title)

    async def ensure_workspace_for_cwd(
        self, cwd: str, *, project_id: str | None = None
    ) -> WorkspaceRecord:
        """The workspace an agent running in ``cwd`` belongs to (created when missing).

        This is the agent manager's entry point: every agent is stamped with the returned
        ``workspaceId``. ``cwd`` must be an existing directory the daemon may open.
        """
        workspace, _project, _created = await self.open_directory(cwd, project_id=project_id)
        return workspace

    async def _provision(
        self, cwd: str, *, project_id: str | None, title: str | None
    ) -> tuple[WorkspaceRecord, ProjectRecord, bool]:
        async with self._placement_lock:
            explicit = await self.projects.get_active(project_id) if project_id else None
            for existing in await self._all(include_archived=False, cwd=cwd):
                owner = await self.store.projects.get(existing.projectId)
                if owner is None:
                    await self._remove_orphan(existing)
                    continue
                if owner.archivedAt is None and (
                    explicit is None or owner.projectId == explicit.projectId
                ):
                    return existing, owner, False
            facts = await asyncio.to_thread(read_facts, cwd)
            project = explicit or await self._project_for(cwd, facts)
            now = utc_now()
            record = WorkspaceRecord(
                workspaceId=new_workspace_id(),
                projectId=project.projectId,
                cwd=cwd,
                displayName=os.path.basename(cwd) or cwd,
                title=title or None,
                baseBranch=None,
                # A checkout under Paseo's worktrees root is Paseo's whoever opens it, so the
                # last of its workspaces to be archived removes it.
                isPaseoOwnedWorktree=facts is not None
                and facts.is_linked_worktree
                and is_within(facts.toplevel, normalize_path(self.worktrees_root())),
                createdAt=now,
                updatedAt=now,
                archivedAt=None,
                **placement(facts),
            )
            await self._insert(record)
            return record, project, True

    async def _project_for(self, cwd: str, facts: RepoFacts | None) -> ProjectRecord:
        if facts is not None and facts.is_linked_worktree:
            owner = await self.projects.containing(facts.main_repo_root)
            if owner is not None:
                return owner
        owner = await self.projects.containing(cwd)
        if owner is not None:
            return owner
        root = facts.main_repo_root if facts is not None and facts.is_linked_worktree else cwd
        project, _created = await self.projects.add(root)
        return project

    async def _insert(self, record: WorkspaceRecord) -> None:
        if not await self.store.workspaces.insert(record):
            raise Conflict(f"workspace id {record.workspaceId} is taken")
        self.announce(record)

    async def register_worktree(
        self,
        *,
        workspace_id: str,
        project: ProjectRecord,
        cwd: str,
        worktree_root: str,
        main_repo_root: str,
        branch: str | None,
        base_branch: str | None,
        display_name: str,
        title: str | None = None,
        untrusted_source: UntrustedSource | None = None,
    ) -> WorkspaceRecord:
        """Record a Paseo-owned worktree checkout (called by the worktree service once the
        checkout is ready). Idempotent for a retried creation: an existing record with this id
        is returned unchanged."""
        async with self._placement_lock:
            existing = await self.store.workspaces.get(workspace_id)
            if existing is not None:
                return existing
            now = utc_now()
            fields: dict[str, Any] = {}
            if untrusted_source is not None:
                fields["untrustedSource"] = untrusted_source
            record = WorkspaceRecord(
                workspaceId=workspace_id,
                projectId=project.projectId,
                cwd=cwd,
                kind="worktree",
                displayName=display_name,
                title=title or None,
                branch=branch,
                worktreeRoot=worktree_root,
                baseBranch=base_branch,
                isPaseoOwnedWorktree=True,
                mainRepoRoot=main_repo_root,
                createdAt=now,
                updatedAt=now,
                archivedAt=None,
                **fields,
            )
            await self._insert(record)
            return record

    # -------------------------------------------------------------- updates

    async def update(
        self, workspace_id: str, changes: dict[str, Any], *, expect: dict[str, Any] | None = None
    ) -> WorkspaceRecord:
        """Apply ``changes`` under the update policy: preserved fields are refused."""
        forbidden = PRESERVED_FIELDS & changes.keys()
        if forbidden:
            raise Conflict(f"workspace fields {sorted(forbidden)} never change after creation")
        await self.get(workspace_id)
        workspace = await self.store.workspaces.update(
            workspace_id, {**changes, "updatedAt": utc_now()}, expect=expect
        )
        self.announce(workspace)
        return workspace

    async def rename(self, workspace_id: str, title: str | None) -> WorkspaceRecord:
        """Set (``None``: clear) the user title; ``displayName`` and ``branch`` are untouched."""
        cleaned = title.strip() if title is not None else None
        return await self.update(workspace_id, {"title": cleaned or None})

    async def pin(self, workspace_id: str, pinned: bool) -> WorkspaceRecord:
        """Pin to (or unpin from) the top of the sidebar."""
        current = await self.get(workspace_id)
        if pinned == (current.pinnedAt is not None):
            return current
        return await self.update(workspace_id, {"pinnedAt": utc_now() if pinned else None})

    async def mark_archived(self, workspace_id: str) -> WorkspaceRecord:
        """Soft-delete the record (idempotent); checkouts are the worktree service's concern."""
        current = await self.get(workspace_id)
        if current.archivedAt is not None:
            return current
        return await self.update(workspace_id, {"archivedAt": utc_now()})

    async def mark_restored(self, workspace_id: str) -> WorkspaceRecord:
        """Undo :meth:`mark_archived`; the owning project must be active."""
        current = await self.get(workspace_id)
        project = await self.projects.get(current.projectId)
        if project.archivedAt is not None:
            raise Conflict(
                f"project {project.projectId} is archived; add its root again first",
                data={"projectId": project.projectId},
            )
        if current.archivedAt is None:
            return current
        return await self.update(
            workspace_id, {"archivedAt": None, "autoArchivedChangeRequestUrl": None}
        )

    async def mark_trusted(self, workspace_id: str) -> WorkspaceRecord:
        """Remove ``untrustedSource`` (``paseo worktree trust``)."""
        current = await self.get(workspace_id)
        if current.untrustedSource is None:
            return current
        return await self.update(workspace_id, {"untrustedSource": None})

    async def active_references(self, worktree_root: str, *, excluding: str) -> builtins.list[str]:
        """Ids of other active workspaces backed by ``worktree_root``."""
        root = normalize_path(worktree_root)
        return [
            w.workspaceId
            for w in await self._all(include_archived=False)
            if w.workspaceId != excluding
            and w.worktreeRoot is not None
            and normalize_path(w.worktreeRoot) == root
        ]

    def reconciliation_changes(
        self, workspace: WorkspaceRecord, facts: RepoFacts | None
    ) -> dict[str, Any]:
        """The placement facts observed for ``workspace`` that differ from its record.

        A backing root or main repository once known is kept when the checkout stops looking
        like one (restore needs them)."""
        observed = placement(facts)
        changes: dict[str, Any] = {}
        for key, value in observed.items():
            if key in ("worktreeRoot", "mainRepoRoot") and value is None:
                continue
            if getattr(workspace, key) != value:
                changes[key] = value
        return changes

    async def refresh(self, workspace: WorkspaceRecord, facts: RepoFacts | None) -> WorkspaceRecord:
        """Store newly observed placement facts of an active workspace, if any changed."""
        changes = self.reconciliation_changes(workspace, facts)
        if not changes:
            return workspace
        updated = await self.store.workspaces.update(
            workspace.workspaceId, {**changes, "updatedAt": utc_now()}
        )
        self.announce(updated)
        return updated
