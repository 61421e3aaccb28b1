"""Worktrees, driven by a plugin: list, create (branch off, check out a branch or a pull
request) and archive Paseo's git worktrees.

Results are the JSON forms the matching wire methods answer with (``worktree.list``,
``worktree.create``, ``worktree.archive``; docs/protocol.md), so a plugin can hand them on.

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

WorktreeMode = Literal["branch-off", "checkout-branch", "change-request"]


class WorktreeControl(Protocol):
    async def list(self, project_id: str | None = None) -> dict[str, Any]:
        """``{"worktrees": [...]}``: every worktree, or ``project_id``'s."""

    async def create(
        self,
        cwd: str,
        *,
        mode: WorktreeMode = "branch-off",
        branch: str | None = None,
        base: str | None = None,
        change_request: int | None = None,
    ) -> dict[str, Any]:
        """A worktree of the project containing ``cwd`` (added as a project when it is none);
        ``{"workspace", "worktree", "reused", "setup"}``. ``InvalidParams`` when ``cwd`` is
        in no git repository."""

    async def archive(self, workspace_id: str, *, force: bool = False) -> dict[str, Any]:
        """Archive the worktree workspace ``workspace_id`` (``NotFound`` when it is none)."""


@runtime_checkable
class WorktreeSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that offers worktrees."""

    @property
    def worktrees(self) -> WorktreeControl: ...


__all__ = ["WorktreeControl", "WorktreeMode", "WorktreeSource"]
