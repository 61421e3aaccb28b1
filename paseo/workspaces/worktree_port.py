"""The contract's :class:`~paseo_hookspecs.workspaces.WorktreeControl` over placement: the
same steps (and answers) as ``worktree.list``/``create``/``archive`` for a local caller.

The ``worktree.*`` adapter (its models and steps) is imported on the first call: a start builds
this port but registers that group without loading it (:mod:`paseo.daemon.wiring`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.workspaces import WorktreeMode

if TYPE_CHECKING:
    from paseo.workspaces.service import Placement


def _json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True)
    return data


class KernelWorktrees:
    def __init__(self, placement: Placement) -> None:
        self._placement = placement

    async def list(self, project_id: str | None = None) -> dict[str, Any]:
        from paseo.workspaces.worktree_rpc import WorktreeInfo

        rows = await self._placement.worktrees.list(project_id=project_id)
        return {"worktrees": [_json(WorktreeInfo(**row)) for row in rows]}

    async def create(
        self,
        cwd: str,
        *,
        mode: WorktreeMode = "branch-off",
        branch: str | None = None,
        base: str | None = None,
        change_request: int | None = None,
    ) -> dict[str, Any]:
        from paseo.workspaces.worktree_rpc import WorktreeCreateParams, create_worktree

        params = WorktreeCreateParams(
            cwd=cwd, mode=mode, branch=branch, base=base, changeRequest=change_request
        )
        # A plugin acts with the daemon's own trust: the paths a local session may name.
        return _json(await create_worktree(self._placement, params, session_kind="local"))

    async def archive(self, workspace_id: str, *, force: bool = False) -> dict[str, Any]:
        from paseo.workspaces.worktree_rpc import archive_result

        outcome = await self._placement.worktrees.archive(workspace_id, force=force)
        return _json(archive_result(outcome))
