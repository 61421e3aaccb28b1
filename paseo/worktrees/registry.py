"""What the worktree service needs of the workspace registry (its port).

The workspace registry (:class:`paseo.workspaces.provisioning.WorkspaceProvisioningService`)
owns placement and composes the worktree service, so the worktree service cannot import it:
it is handed one as this protocol. A worktree becomes a workspace only through
:meth:`WorkspaceRegistry.register_worktree`.
"""

from __future__ import annotations

import builtins
from typing import Protocol

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import ProjectRecord, UntrustedSource, WorkspaceRecord

from paseo.projects.service import ProjectRegistry


class WorkspaceRegistry(Protocol):
    """The workspace records a worktree's lifecycle reads and changes."""

    @property
    def store(self) -> Store: ...

    @property
    def projects(self) -> ProjectRegistry: ...

    async def get(self, workspace_id: str) -> WorkspaceRecord:
        """The workspace (``NotFound`` when there is none, or it is orphaned)."""

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
        """Record a Paseo-owned worktree checkout as a workspace."""

    async def mark_archived(self, workspace_id: str) -> WorkspaceRecord: ...

    async def mark_restored(self, workspace_id: str) -> WorkspaceRecord: ...

    async def mark_trusted(self, workspace_id: str) -> WorkspaceRecord:
        """Remove ``untrustedSource``: the user allowed the repository's automation."""

    async def active_references(self, worktree_root: str, *, excluding: str) -> builtins.list[str]:
        """Ids of other active workspaces backed by ``worktree_root``."""
