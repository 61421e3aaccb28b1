"""``trash.list``, ``trash.restore`` and ``trash.empty`` over the wire."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import Field

from paseo.agents.models import AgentRefParams, AgentResult
from paseo.rpc.models import WireModel
from paseo.services import ServiceRef
from paseo.trash.service import iso

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext
    from pydantic import BaseModel

    from paseo.trash.service import TrashService


class TrashedAgent(WireModel):
    agent: AgentRecord = Field(description="the tombstone: the record as deleted, with deletedAt")
    purgeAfter: str = Field(description="when automatic maintenance may purge it (ISO 8601)")


class CleanupView(WireModel):
    id: str
    agentId: str
    createdAt: str = Field(description="when the purge committed")
    attempts: int = Field(description="failed removal attempts so far")
    lastError: str | None = None


class TrashListResult(WireModel):
    agents: list[TrashedAgent] = Field(description="most recently deleted first")
    retentionDays: int = Field(description="agents.trashRetentionDays in force")
    lastSweepAt: str | None = Field(description="the last successful automatic sweep")
    cleanup: list[CleanupView] = Field(
        description="purged agents whose run directory is still to be removed (oldest first)"
    )


class TrashEmptyParams(WireModel):
    agentIds: list[str] | None = Field(
        default=None,
        max_length=1000,
        description="tombstones to purge (id, id prefix or title); omitted: all of them",
    )


class TrashEmptyResult(WireModel):
    purged: list[str] = Field(description="ids of the agents removed for good")
    cleaned: int = Field(description="cleanup items finished")
    failed: int = Field(description="cleanup items that failed and stay queued for a retry")


def method_groups(ref: ServiceRef[TrashService]) -> list[RpcMethodGroup]:
    """The ``trash`` group, reaching its service through ``ref``."""

    async def list_trash(ctx: RpcContext, params: None) -> TrashListResult:
        service = ref.get()
        entries = await service.entries()
        return TrashListResult(
            agents=[
                TrashedAgent(agent=entry.record, purgeAfter=iso(entry.purge_after))
                for entry in entries
            ],
            retentionDays=service.retention.days,
            lastSweepAt=await service.last_sweep(),
            cleanup=[
                CleanupView(
                    id=item.id,
                    agentId=item.agentId,
                    createdAt=item.createdAt,
                    attempts=item.attempts,
                    lastError=item.lastError,
                )
                for item in await service.queued()
            ],
        )

    async def restore(ctx: RpcContext, params: AgentRefParams) -> AgentResult:
        return AgentResult(agent=await ref.get().restore(params.agentId))

    async def empty(ctx: RpcContext, params: TrashEmptyParams) -> TrashEmptyResult:
        report = await ref.get().empty(params.agentIds)
        return TrashEmptyResult(purged=report.purged, cleaned=report.cleaned, failed=report.failed)

    return [
        RpcMethodGroup(
            "trash",
            [
                RpcMethod(
                    "trash.list",
                    list_trash,
                    None,
                    TrashListResult,
                    "Deleted agents kept restorable, and the cleanup still queued",
                ),
                RpcMethod(
                    "trash.restore",
                    restore,
                    AgentRefParams,
                    AgentResult,
                    "Bring a deleted agent back with its history; its next prompt resumes it",
                ),
                RpcMethod(
                    "trash.empty",
                    empty,
                    TrashEmptyParams,
                    TrashEmptyResult,
                    "Remove deleted agents for good now (all of them, or those named)",
                ),
            ],
        )
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """Restoring publishes ``agent.created`` on the agents stream; the trash has no stream."""
    return {}
