"""``worktree.*``: Paseo-owned worktrees over the wire.

Setup and teardown progress is published on the ``workspaces`` stream as
``worktree.progress`` notifications (``{worktreeId, phase, event}``, where ``event`` is
``command_started``, ``output`` (with ``stream`` and ``chunk``) or ``command_completed``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from paseo_hookspecs.context import RpcContext
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import WorkspaceRecord
from paseo_hookspecs.registration import RpcMethodGroup
from pydantic import Field

from paseo.git.facts import normalize_path, read_facts
from paseo.projects.paths import is_within
from paseo.rpc.models import WireModel
from paseo.workspaces.adapter import WorkspacesRef, placement_methods
from paseo.worktrees.model import ArchiveOutcome, WorktreeRequest

if TYPE_CHECKING:
    from paseo.workspaces.service import Placement


class CommandOutput(WireModel):
    """One setup or teardown command's outcome."""

    command: str
    cwd: str
    exitCode: int | None
    stdout: str
    stderr: str
    durationMs: int


class WorktreeCreateParams(WireModel):
    projectId: str | None = Field(default=None, description="the project whose repository is used")
    cwd: str | None = Field(
        default=None, description="instead of projectId: a directory inside the project"
    )
    mode: Literal["branch-off", "checkout-branch", "change-request"] = "branch-off"
    branch: str | None = Field(
        default=None,
        description="new branch (branch-off; generated when absent), existing "
        "branch (checkout-branch) or local branch for a change request (default pr-<n>)",
    )
    base: str | None = Field(default=None, description="base ref (default: default branch)")
    changeRequest: int | None = Field(default=None, gt=0, description="pull request number")
    headRepository: str | None = Field(
        default=None,
        description="change request from another repository (a fork): its owner/name; the "
        "workspace is untrustedSource and runs no setup or services until worktree.trust",
    )
    remote: str = "origin"
    slug: str | None = Field(default=None, description="directory name (default from branch)")
    relativeCwd: str | None = None
    title: str | None = None
    runSetup: bool = True
    prompt: str | None = Field(
        default=None,
        max_length=100_000,
        description="what the work is about: a branch-off without `branch` gets a branch name "
        "generated from it (or from `title`); without either, or when generation fails, "
        "paseo/<random hex>",
    )


class WorktreeInfo(WireModel):
    id: str
    phase: str
    path: str
    branch: str | None
    baseRef: str | None = None
    projectId: str
    workspaceId: str
    cwd: str | None = None
    archived: bool | None = None
    port: int | None = None
    createdAt: str


class WorktreeCreateResult(WireModel):
    workspace: WorkspaceRecord
    worktree: WorktreeInfo
    reused: bool = Field(description="an earlier identical request had already created it")
    setup: list[CommandOutput]


class WorktreeListParams(WireModel):
    projectId: str | None = None


class WorktreeListResult(WireModel):
    worktrees: list[WorktreeInfo]


class ArchiveParams(WireModel):
    workspaceId: str = Field(min_length=1)
    force: bool = Field(default=False, description="archive despite uncommitted/unpushed work")


class ArchiveResult(WireModel):
    workspace: WorkspaceRecord
    teardown: list[CommandOutput]
    removedCheckout: bool
    branchDeleted: bool
    stillReferencedBy: list[str] = Field(
        description="other active workspaces still using the backing checkout"
    )


class RestoreParams(WireModel):
    workspaceId: str = Field(min_length=1)
    runSetup: bool = True


class TrustParams(WireModel):
    workspaceId: str = Field(min_length=1)
    runSetup: bool = True


class TrustResult(WireModel):
    workspace: WorkspaceRecord
    setup: list[CommandOutput]


class WorkspaceResult(WireModel):
    workspace: WorkspaceRecord


class SetupCommandStatus(WireModel):
    index: int
    command: str
    cwd: str
    status: Literal["running", "completed", "failed"]
    exitCode: int | None
    durationMs: int | None
    log: str = Field(description="this command's output (its last 64 KiB)")


class SetupStatus(WireModel):
    workspaceId: str
    path: str | None = Field(description="the worktree's checkout (null: a trusted one's rerun)")
    branch: str | None
    status: Literal["running", "completed", "failed"]
    commands: list[SetupCommandStatus]
    log: str = Field(description="the whole setup's output (its last 64 KiB)")
    truncated: bool
    error: str | None


class SetupStatusParams(WireModel):
    workspaceId: str = Field(min_length=1)


class SetupStatusResult(WireModel):
    setup: SetupStatus | None = Field(
        description="the last setup the daemon ran for the workspace since it started; null "
        "when none ran (no worktree.setup commands, or before a restart)"
    )


def archive_result(outcome: ArchiveOutcome) -> ArchiveResult:
    return ArchiveResult(
        workspace=outcome.workspace,
        teardown=[CommandOutput(**r.to_json()) for r in outcome.teardown],
        removedCheckout=outcome.removed_checkout,
        branchDeleted=outcome.branch_deleted,
        stillReferencedBy=outcome.still_referenced_by,
    )


async def worktree_create(
    placement: Placement, ctx: RpcContext, params: WorktreeCreateParams
) -> WorktreeCreateResult:
    return await create_worktree(placement, params, session_kind=ctx.session_kind)


async def create_worktree(
    placement: Placement, params: WorktreeCreateParams, *, session_kind: str
) -> WorktreeCreateResult:
    """``worktree.create`` for a caller of ``session_kind`` (which paths it may name); the
    plugins' worktree port (:mod:`paseo.workspaces.worktree_port`) calls it as ``local``."""
    project_id = params.projectId
    if project_id is None:
        if params.cwd is None:
            raise InvalidParams("give projectId or cwd")
        cwd = await placement.workspaces.check_path(params.cwd, session_kind=session_kind)
        project = await placement.projects.containing(cwd)
        facts = await asyncio.to_thread(read_facts, cwd)
        if (
            project is not None
            and facts is not None
            and not is_within(project.rootPath, normalize_path(facts.main_repo_root))
        ):
            # A project above the checkout (a plain directory that holds it) is not the
            # checkout's: the worktree is made from the repository's own project.
            project, _created = await placement.projects.add(facts.main_repo_root)
        if project is None:
            project, _created = await placement.projects.add(cwd)
        project_id = project.projectId
    outcome = await placement.worktrees.create(
        WorktreeRequest(
            project_id=project_id,
            mode=params.mode,
            branch=params.branch,
            base=params.base,
            change_request=params.changeRequest,
            remote=params.remote,
            slug=params.slug,
            relative_cwd=params.relativeCwd,
            title=params.title,
            run_setup=params.runSetup,
            prompt=params.prompt,
            head_repository=params.headRepository,
        )
    )
    placement.reconciler.trigger()
    if not outcome.reused and placement.after_create is not None:
        await placement.after_create(outcome.workspace)
    rows = [r for r in await placement.worktrees.list() if r["id"] == outcome.metadata.id]
    info: dict[str, Any] = rows[0] if rows else {}
    return WorktreeCreateResult(
        workspace=outcome.workspace,
        worktree=WorktreeInfo(**info),
        reused=outcome.reused,
        setup=[CommandOutput(**r.to_json()) for r in outcome.setup],
    )


async def worktree_list(
    placement: Placement, ctx: RpcContext, params: WorktreeListParams
) -> WorktreeListResult:
    rows = await placement.worktrees.list(project_id=params.projectId)
    return WorktreeListResult(worktrees=[WorktreeInfo(**row) for row in rows])


async def worktree_archive(
    placement: Placement, ctx: RpcContext, params: ArchiveParams
) -> ArchiveResult:
    outcome = await placement.worktrees.archive(params.workspaceId, force=params.force)
    return archive_result(outcome)


async def worktree_restore(
    placement: Placement, ctx: RpcContext, params: RestoreParams
) -> WorkspaceResult:
    workspace = await placement.worktrees.restore(params.workspaceId, run_setup=params.runSetup)
    return WorkspaceResult(workspace=workspace)


async def worktree_trust(placement: Placement, ctx: RpcContext, params: TrustParams) -> TrustResult:
    workspace, results = await placement.worktrees.trust(
        params.workspaceId, run_setup=params.runSetup
    )
    if params.runSetup and placement.after_create is not None:
        await placement.after_create(workspace)  # its terminals waited for the trust too
    return TrustResult(workspace=workspace, setup=[CommandOutput(**r.to_json()) for r in results])


async def worktree_setup_status(
    placement: Placement, ctx: RpcContext, params: SetupStatusParams
) -> SetupStatusResult:
    # Asked while a new worktree's setup runs, the workspace is not registered yet: no lookup.
    run = placement.setup.get(params.workspaceId)
    return SetupStatusResult(setup=SetupStatus(**run.to_json()) if run is not None else None)


def worktree_group(ref: WorkspacesRef) -> RpcMethodGroup:
    """The ``worktree`` method group."""
    method = placement_methods(ref)
    return RpcMethodGroup(
        "worktree",
        [
            method(
                "worktree.create",
                worktree_create,
                WorktreeCreateParams,
                WorktreeCreateResult,
                "Create a Paseo-owned worktree and its workspace (branch off, existing "
                "branch, or change request); retries repair or reuse",
            ),
            method(
                "worktree.list",
                worktree_list,
                WorktreeListParams,
                WorktreeListResult,
                "Managed worktrees and their workspaces",
            ),
            method(
                "worktree.archive",
                worktree_archive,
                ArchiveParams,
                ArchiveResult,
                "Teardown, archive, and remove the checkout once no workspace uses it",
            ),
            method(
                "worktree.restore",
                worktree_restore,
                RestoreParams,
                WorkspaceResult,
                "Unarchive, recreating the checkout from the main repository",
            ),
            method(
                "worktree.trust",
                worktree_trust,
                TrustParams,
                TrustResult,
                "Allow a fork's worktree (untrustedSource) to run its paseo.json: clears the "
                "mark and runs the setup it skipped",
            ),
            method(
                "worktree.setupStatus",
                worktree_setup_status,
                SetupStatusParams,
                SetupStatusResult,
                "The last setup run of a workspace: its commands, status and output",
            ),
        ],
    )
