"""``checkpoint.list``, ``checkpoint.diff``, ``checkpoint.undo`` and ``checkpoint.redo`` over
the wire."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import Field

from paseo.agents.models import AgentRefParams
from paseo.rpc.models import WireModel
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext
    from pydantic import BaseModel

    from paseo.checkpoints.service import CheckpointService, History, Restoration


class TurnView(WireModel):
    turn: int = Field(description="the turn's number for this agent, from 1")
    startedAt: str | None = Field(description="when the turn started (ISO 8601)")
    endedAt: str | None = Field(description="when it ended; null while it runs or if cut off")
    outcome: str | None = Field(description="completed, failed or canceled; null if not ended")
    filesChanged: int | None = Field(description="paths the turn changed; null if not ended")
    commit: str = Field(description="the checkpoint commit (after the turn, else before it)")


class UndoView(WireModel):
    turn: int = Field(description="the turn the undo took back")
    paths: list[str] = Field(description="the paths it restored")
    at: str | None = Field(description="when (ISO 8601)")


class CheckpointListResult(WireModel):
    agentId: str
    available: bool = Field(description="whether the agent's cwd is in a git working tree")
    repository: str | None = Field(description="the working tree's top level")
    reason: str | None = Field(description="why there is nothing to list, when there is not")
    turns: list[TurnView] = Field(description="oldest first")
    undos: list[UndoView] = Field(description="undos `checkpoint.redo` can take back, oldest first")


class CheckpointTurnParams(AgentRefParams):
    turn: int | None = Field(default=None, ge=1, description="one turn (default: see the method)")


class TurnPatch(WireModel):
    turn: int
    diff: str = Field(description="unified diff of what the turn changed")


class CheckpointDiffResult(WireModel):
    agentId: str
    turns: list[TurnPatch] = Field(description="one entry per turn, oldest first")


class RestoreResult(WireModel):
    agentId: str
    turn: int = Field(description="the turn undone (or whose undo was taken back)")
    restored: list[str] = Field(description="paths written back or removed")
    unchanged: list[str] = Field(description="paths that were already so")
    conflicts: list[str] = Field(
        description="paths changed since (by the user or a later turn), left alone"
    )


def _list_result(history: History) -> CheckpointListResult:
    return CheckpointListResult(
        agentId=history.agent.id,
        available=history.repo is not None,
        repository=str(history.repo.toplevel) if history.repo is not None else None,
        reason=history.reason,
        turns=[
            TurnView(
                turn=t.number,
                startedAt=t.startedAt,
                endedAt=t.endedAt,
                outcome=t.outcome,
                filesChanged=t.filesChanged,
                commit=t.after or t.before,
            )
            for t in history.turns
        ],
        undos=[UndoView(turn=u.turn, paths=u.paths, at=u.at) for u in history.undos],
    )


def _restore_result(report: Restoration) -> RestoreResult:
    return RestoreResult(
        agentId=report.agentId,
        turn=report.turn,
        restored=report.restored,
        unchanged=report.unchanged,
        conflicts=report.conflicts,
    )


def method_groups(ref: ServiceRef[CheckpointService]) -> list[RpcMethodGroup]:
    """The ``checkpoint`` group, reaching its service through ``ref``."""

    async def list_checkpoints(ctx: RpcContext, params: AgentRefParams) -> CheckpointListResult:
        return _list_result(await ref.get().history(params.agentId))

    async def diff(ctx: RpcContext, params: CheckpointTurnParams) -> CheckpointDiffResult:
        history, patches = await ref.get().diff(params.agentId, params.turn)
        return CheckpointDiffResult(
            agentId=history.agent.id,
            turns=[TurnPatch(turn=number, diff=text) for number, text in patches],
        )

    async def undo(ctx: RpcContext, params: CheckpointTurnParams) -> RestoreResult:
        return _restore_result(await ref.get().undo(params.agentId, params.turn))

    async def redo(ctx: RpcContext, params: AgentRefParams) -> RestoreResult:
        return _restore_result(await ref.get().redo(params.agentId))

    return [
        RpcMethodGroup(
            "checkpoint",
            [
                RpcMethod(
                    "checkpoint.list",
                    list_checkpoints,
                    AgentRefParams,
                    CheckpointListResult,
                    "An agent's turn checkpoints (or why it has none) and its undos",
                ),
                RpcMethod(
                    "checkpoint.diff",
                    diff,
                    CheckpointTurnParams,
                    CheckpointDiffResult,
                    "Unified diff of what one turn changed (default: every ended turn)",
                ),
                RpcMethod(
                    "checkpoint.undo",
                    undo,
                    CheckpointTurnParams,
                    RestoreResult,
                    "Restore what one turn (default: the last) changed; refused while running",
                ),
                RpcMethod(
                    "checkpoint.redo",
                    redo,
                    AgentRefParams,
                    RestoreResult,
                    "Take the agent's last undo back; refused while it runs",
                ),
            ],
        )
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """Checkpoints publish nothing."""
    return {}
