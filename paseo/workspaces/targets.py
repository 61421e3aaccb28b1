"""Worktree targets of new agents (``AgentCreate.worktree``), made through the worktree service.

The same path as ``worktree.create``: the project of ``cwd`` is found (or made), then the
worktree for the target; an existing worktree of the same branch is reused, so a retried
create lands in the same checkout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs.agents import BranchOff, CheckoutBranch, WorktreeTarget

from paseo.worktrees.model import WorktreeRequest

if TYPE_CHECKING:
    from paseo.workspaces.service import WorkspacesService


class WorktreeTargets:
    """Implements :class:`paseo.agents.port.control.WorktreePlacement`."""

    def __init__(self, workspaces: WorkspacesService) -> None:
        self._workspaces = workspaces

    async def workspace_for(self, cwd: str, target: WorktreeTarget) -> str:
        """The id of the workspace of the worktree ``target`` names in ``cwd``'s repository."""
        project = (await self._workspaces.ensure_workspace_for_cwd(cwd)).projectId
        if isinstance(target, BranchOff):
            request = WorktreeRequest(
                project, "branch-off", branch=target.newBranch, base=target.base
            )
        elif isinstance(target, CheckoutBranch):
            request = WorktreeRequest(project, "checkout-branch", branch=target.branch)
        else:
            request = WorktreeRequest(project, "change-request", change_request=target.prNumber)
        outcome = await self._workspaces.placement.worktrees.create(request)
        return outcome.workspace.workspaceId
