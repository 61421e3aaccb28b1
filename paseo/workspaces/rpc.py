"""``workspace.*`` and ``label.*`` over the wire.

Changes are announced on the ``workspaces`` stream: ``project.changed``, ``workspace.changed``
(opened, renamed, pinned, archived, restored, labelled, or new Git facts from reconciliation),
``workspace.removed``, ``workspace.status`` (its derived status, see
:mod:`paseo.workspaces.status`), ``label.catalogChanged`` and ``worktree.progress``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from paseo_hookspecs.context import RpcContext
from paseo_hookspecs.records import (
    ProjectRecord,
    WorkspaceLabelColor,
    WorkspaceLabelDefinition,
    WorkspaceRecord,
)
from paseo_hookspecs.registration import RpcMethodGroup
from pydantic import BaseModel, Field

from paseo.rpc.models import StreamEvent, WireModel
from paseo.workspaces.adapter import WorkspacesRef, placement_methods
from paseo.workspaces.worktree_rpc import (
    ArchiveParams,
    ArchiveResult,
    RestoreParams,
    WorkspaceResult,
    worktree_archive,
    worktree_restore,
)

if TYPE_CHECKING:
    from paseo.workspaces.service import Placement


class WorkspaceListParams(WireModel):
    projectId: str | None = None
    includeArchived: bool = False


class WorkspaceListResult(WireModel):
    workspaces: list[WorkspaceRecord]
    running: list[str] = Field(default_factory=list)
    """Ids of the listed workspaces whose status is ``running`` (an agent's turn or a
    terminal's output right now); the others are idle."""


class WorkspaceIdParams(WireModel):
    workspaceId: str = Field(min_length=1)


class WorkspaceOpenParams(WireModel):
    path: str = Field(description="absolute directory: the workspace's exact cwd")
    projectId: str | None = Field(
        default=None, description="put the workspace in this (active) project"
    )
    title: str | None = None


class WorkspaceOpenResult(WireModel):
    workspace: WorkspaceRecord
    project: ProjectRecord
    created: bool


class WorkspacePinParams(WireModel):
    workspaceId: str = Field(min_length=1)
    pinned: bool = True


class WorkspaceRenameParams(WireModel):
    workspaceId: str = Field(min_length=1)
    title: str | None = Field(description="the title; null returns to the derived name")


class ReconcileResult(WireModel):
    observed: int
    read: int
    updated: list[str]


class LabelListResult(WireModel):
    labels: list[WorkspaceLabelDefinition]


class LabelCreateParams(WireModel):
    name: str = Field(min_length=1, max_length=200)
    color: WorkspaceLabelColor


class LabelEditParams(WireModel):
    name: str = Field(min_length=1)
    newName: str | None = Field(default=None, max_length=200)
    color: WorkspaceLabelColor | None = None


class LabelResult(WireModel):
    label: WorkspaceLabelDefinition


class LabelNameParams(WireModel):
    name: str = Field(min_length=1)


class LabelDeleteResult(WireModel):
    deleted: bool


class LabelAssignParams(WireModel):
    workspaceId: str = Field(min_length=1)
    names: list[str] = Field(min_length=1)


async def workspace_list(
    placement: Placement, ctx: RpcContext, params: WorkspaceListParams
) -> WorkspaceListResult:
    rows = await placement.workspaces.list(
        project_id=params.projectId, include_archived=params.includeArchived
    )
    running = placement.running()
    return WorkspaceListResult(
        workspaces=rows, running=[w.workspaceId for w in rows if w.workspaceId in running]
    )


async def workspace_get(
    placement: Placement, ctx: RpcContext, params: WorkspaceIdParams
) -> WorkspaceResult:
    return WorkspaceResult(workspace=await placement.workspaces.get(params.workspaceId))


class GitRuntimeResult(WireModel):
    isDirty: bool | None = Field(description="uncommitted changes (null: not readable)")
    aheadBehind: dict[str, int] | None = Field(
        description="{ahead, behind}: commits of the branch not in its base, and the reverse"
    )
    aheadOfOrigin: int | None
    behindOfOrigin: int | None
    diffStat: dict[str, int] | None = Field(
        default=None,
        description="{additions, deletions}: lines changed (working tree included) since the "
        "merge base with origin's or the local base branch (on the base branch: with "
        "origin/<branch>); null without such a ref or with no change",
    )
    remoteUrl: str | None = Field(default=None, description="origin's URL (null: none)")


async def workspace_git_runtime(
    placement: Placement, ctx: RpcContext, params: WorkspaceIdParams
) -> GitRuntimeResult:
    workspace = await placement.workspaces.get(params.workspaceId)
    found = await placement.git_runtime.get(workspace) if placement.git_runtime else None
    return GitRuntimeResult(
        **(
            found.to_json()
            if found
            else dict.fromkeys(
                ("isDirty", "aheadBehind", "aheadOfOrigin", "behindOfOrigin", "diffStat")
            )
        )
    )


async def workspace_open(
    placement: Placement, ctx: RpcContext, params: WorkspaceOpenParams
) -> WorkspaceOpenResult:
    workspace, project, created = await placement.workspaces.open_directory(
        params.path,
        project_id=params.projectId,
        title=params.title,
        session_kind=ctx.session_kind,
    )
    return WorkspaceOpenResult(workspace=workspace, project=project, created=created)


async def workspace_pin(
    placement: Placement, ctx: RpcContext, params: WorkspacePinParams
) -> WorkspaceResult:
    workspace = await placement.workspaces.pin(params.workspaceId, params.pinned)
    return WorkspaceResult(workspace=workspace)


async def workspace_rename(
    placement: Placement, ctx: RpcContext, params: WorkspaceRenameParams
) -> WorkspaceResult:
    workspace = await placement.workspaces.rename(params.workspaceId, params.title)
    return WorkspaceResult(workspace=workspace)


async def workspace_reconcile(
    placement: Placement, ctx: RpcContext, params: None
) -> ReconcileResult:
    stats = await placement.reconciler.reconcile_once()
    return ReconcileResult(observed=stats.observed, read=stats.read, updated=stats.updated)


async def label_list(placement: Placement, ctx: RpcContext, params: None) -> LabelListResult:
    return LabelListResult(labels=await placement.labels.list())


async def label_create(
    placement: Placement, ctx: RpcContext, params: LabelCreateParams
) -> LabelResult:
    return LabelResult(label=await placement.labels.create(params.name, params.color))


async def label_edit(placement: Placement, ctx: RpcContext, params: LabelEditParams) -> LabelResult:
    label = await placement.labels.edit(params.name, new_name=params.newName, color=params.color)
    return LabelResult(label=label)


async def label_delete(
    placement: Placement, ctx: RpcContext, params: LabelNameParams
) -> LabelDeleteResult:
    await placement.labels.delete(params.name)
    return LabelDeleteResult(deleted=True)


async def label_assign(
    placement: Placement, ctx: RpcContext, params: LabelAssignParams
) -> WorkspaceResult:
    workspace = await placement.labels.assign(params.workspaceId, params.names)
    return WorkspaceResult(workspace=workspace)


async def label_unassign(
    placement: Placement, ctx: RpcContext, params: LabelAssignParams
) -> WorkspaceResult:
    workspace = await placement.labels.unassign(params.workspaceId, params.names)
    return WorkspaceResult(workspace=workspace)


def workspace_group(ref: WorkspacesRef) -> RpcMethodGroup:
    """The ``workspace`` method group."""
    method = placement_methods(ref)
    return RpcMethodGroup(
        "workspace",
        [
            method(
                "workspace.gitRuntime",
                workspace_git_runtime,
                WorkspaceIdParams,
                GitRuntimeResult,
                "A checkout's uncommitted changes and commits ahead/behind its base and origin "
                "(kept 5 s)",
            ),
            method(
                "workspace.list",
                workspace_list,
                WorkspaceListParams,
                WorkspaceListResult,
                "List workspaces (rows whose project is missing are omitted)",
            ),
            method(
                "workspace.get", workspace_get, WorkspaceIdParams, WorkspaceResult, "One workspace"
            ),
            method(
                "workspace.open",
                workspace_open,
                WorkspaceOpenParams,
                WorkspaceOpenResult,
                "The workspace of a directory, created (with its project) when missing",
            ),
            method(
                "workspace.archive",
                # The same operation as worktree.archive / worktree.restore: one handler each.
                worktree_archive,
                ArchiveParams,
                ArchiveResult,
                "Archive a workspace (a Paseo-owned worktree is torn down and removed once "
                "no other workspace uses it)",
            ),
            method(
                "workspace.restore",
                worktree_restore,
                RestoreParams,
                WorkspaceResult,
                "Unarchive a workspace, recreating its worktree checkout when needed",
            ),
            method(
                "workspace.pin", workspace_pin, WorkspacePinParams, WorkspaceResult, "Pin or unpin"
            ),
            method(
                "workspace.rename",
                workspace_rename,
                WorkspaceRenameParams,
                WorkspaceResult,
                "Set or clear a workspace title",
            ),
            method(
                "workspace.reconcile",
                workspace_reconcile,
                None,
                ReconcileResult,
                "Refresh Git-derived facts of projects and workspaces now",
            ),
        ],
    )


def label_group(ref: WorkspacesRef) -> RpcMethodGroup:
    """The ``label`` method group (the host-wide workspace label catalog)."""
    method = placement_methods(ref)
    return RpcMethodGroup(
        "label",
        [
            method("label.list", label_list, None, LabelListResult, "The label catalog"),
            method("label.create", label_create, LabelCreateParams, LabelResult, "Add a label"),
            method(
                "label.edit",
                label_edit,
                LabelEditParams,
                LabelResult,
                "Rename and/or recolour a label in one commit (rename rewrites assignments)",
            ),
            method(
                "label.delete",
                label_delete,
                LabelNameParams,
                LabelDeleteResult,
                "Delete a label and every assignment of it",
            ),
            method(
                "label.assign",
                label_assign,
                LabelAssignParams,
                WorkspaceResult,
                "Add catalog labels to a workspace",
            ),
            method(
                "label.unassign",
                label_unassign,
                LabelAssignParams,
                WorkspaceResult,
                "Remove labels from a workspace",
            ),
        ],
    )


# ------------------------------------------------------------------------------ notifications


class ProjectChangedEvent(StreamEvent):
    """A project was added, renamed, archived or restored."""

    project: ProjectRecord


class WorkspaceChangedEvent(StreamEvent):
    """A workspace was created or its record changed (archiving included: ``archivedAt``)."""

    workspace: WorkspaceRecord


class WorkspaceRemovedEvent(StreamEvent):
    """A workspace record was deleted (a discarded worktree, an orphan)."""

    workspaceId: str


class WorkspaceStatusEvent(StreamEvent):
    """A workspace's derived status changed: ``running`` while an agent's turn or a terminal's
    output runs in it."""

    workspaceId: str
    status: Literal["running", "idle"]


class LabelCatalogChangedEvent(StreamEvent):
    labels: list[WorkspaceLabelDefinition]


class WorktreeProgressEvent(StreamEvent):
    """A step of a worktree's creation or teardown (``event`` is the step's own report)."""

    worktreeId: str
    workspaceId: str | None = Field(
        None, description="the workspace the worktree is (or becomes) the checkout of"
    )
    path: str | None = Field(None, description="a new worktree's checkout (setup)")
    branch: str | None = Field(None, description="a new worktree's branch (setup)")
    phase: str
    event: dict[str, Any]


def notifications() -> dict[str, type[BaseModel]]:
    """The ``workspaces`` stream's notifications (method → params model), for the schema."""
    return {
        "project.changed": ProjectChangedEvent,
        "workspace.changed": WorkspaceChangedEvent,
        "workspace.removed": WorkspaceRemovedEvent,
        "workspace.status": WorkspaceStatusEvent,
        "label.catalogChanged": LabelCatalogChangedEvent,
        "worktree.progress": WorktreeProgressEvent,
    }
