"""The workspace registry: ``projects/workspaces.json``, a JSON array of workspace records.

A workspace is the durable placement of work inside a project: ``cwd`` is the exact execution
directory and ``worktreeRoot`` the backing checkout, which differ for a subproject inside a
worktree. ``workspaceId`` is opaque identity (``wks_<16 hex>`` for new records; older records may
hold a path) and is never used as a path.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, RootModel

from paseo_hookspecs.records._base import ROOT_CONFIG, RecordModel

__all__ = ["UntrustedSource", "WorkspaceKind", "WorkspaceRecord", "WorkspacesFile"]

WorkspaceKind = Literal["local_checkout", "worktree", "directory"]
"""Mutable checkout classification."""


class UntrustedSource(RecordModel):
    """Provenance of a workspace created from a cross-repository change request.

    While present, repository automation is not allowed; explicit setup removes it.
    """

    kind: Literal["change_request"]
    forge: str
    number: Annotated[int, Field(gt=0)]
    headRepository: str


class WorkspaceRecord(RecordModel):
    """One workspace: its project, exact cwd, checkout placement, names, labels and pin.

    Nullable placement and naming fields (``title`` ... ``pinnedAt``) and ``isPaseoOwnedWorktree``
    default when absent (``null`` / ``false``) and are always written. ``archivedAt`` is required.
    ``labels`` (normalized catalog names) and ``untrustedSource`` are omitted when unset.
    """

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset(
        {
            "title",
            "branch",
            "worktreeRoot",
            "baseBranch",
            "isPaseoOwnedWorktree",
            "mainRepoRoot",
            "autoArchivedChangeRequestUrl",
            "pinnedAt",
        }
    )
    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"labels", "untrustedSource"})

    workspaceId: Annotated[str, Field(min_length=1)]
    projectId: str
    cwd: str
    kind: WorkspaceKind
    displayName: str
    title: str | None = None
    branch: str | None = None
    worktreeRoot: str | None = None
    baseBranch: str | None = None
    isPaseoOwnedWorktree: bool = False
    mainRepoRoot: str | None = None
    createdAt: str
    updatedAt: str
    archivedAt: str | None
    autoArchivedChangeRequestUrl: str | None = None
    pinnedAt: str | None = None
    labels: list[str] | None = None
    untrustedSource: UntrustedSource | None = None


class WorkspacesFile(RootModel[list[WorkspaceRecord]]):
    """The whole ``projects/workspaces.json`` registry."""

    model_config = ROOT_CONFIG
