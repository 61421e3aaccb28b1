"""The contract's :class:`~paseo_hookspecs.workspaces.WorktreeControl` over placement: the
same steps (and answers) as ``worktree.list``/``create``/``archive`` for a local caller."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.workspaces import WorktreeMode

from paseo.worktrees.rpc import (
    ArchiveParams,
    WorktreeCreateParams,
    WorktreeListParams,
    worktree_archive,
    worktree_create,
    worktree_list,
)

if TYPE_CHECKING:
    from paseo.workspaces.service import Placement


class _Local:
    """What the worktree steps read of a caller: plugins act with the daemon's own trust."""

    session_kind = "local"
    client_id = "plugin"


def _json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True)
    return data


class KernelWorktrees:
    def __init__(self, placement: Placement) -> None:
        self._placement = placement

    async def list(self, project_id: str | None = None) -> dict[str, Any]:
        params = WorktreeListParams(projectId=project_id)
        return _json(await worktree_list(self._placement, _Local(), params))  # type: ignore[arg-type]

    async def create(
        self,
        cwd: str,
        *,
        mode: WorktreeMode = "branch-off",
        branch: str | None = None,
        base: str | None = None,
        change_request: int | None = None,
    ) -> dict[str, Any]:
        params = WorktreeCreateParams(
            cwd=cwd, mode=mode, branch=branch, base=base, changeRequest=change_request
        )
        return _json(await worktree_create(self._placement, _Local(), params))  # type: ignore[arg-type]

    async def archive(self, workspace_id: str, *, force: bool = False) -> dict[str, Any]:
        params = ArchiveParams(workspaceId=workspace_id, force=force)
        return _json(await worktree_archive(self._placement, _Local(), params))  # type: ignore[arg-type]
