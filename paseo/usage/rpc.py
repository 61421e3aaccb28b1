"""``usage.query`` and ``usage.agent`` over the wire."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import AgentBudget
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import Field

from paseo.rpc.models import WireModel
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext
    from paseo_hookspecs.usage import UsageTotals as Totals
    from pydantic import BaseModel

    from paseo.usage.service import UsageService


class UsageTotals(WireModel):
    key: str | None = Field(
        description="the group: agent id, provider, model, project id, `source:id` "
        "(schedule/loop/hub/metadata) or UTC day; null for turns with none"
    )
    turns: int = Field(description="turns that ended (completed, canceled or failed)")
    inputTokens: int | None = Field(description="null when no turn of the group reported it")
    outputTokens: int | None = None
    cacheReadTokens: int | None = None
    cacheWriteTokens: int | None = None
    costUsd: float | None = Field(
        description="USD as the providers reported it; null when none did (never estimated)"
    )
    costUnknownTurns: int = Field(description="turns whose provider reported no cost")


def _wire(totals: Totals) -> UsageTotals:
    return UsageTotals.model_validate(totals.to_json())


class UsageQueryParams(WireModel):
    since: str | None = Field(
        default=None,
        description="a duration back from now (30m, 12h, 7d, 2w), a date or an ISO instant",
    )
    until: str | None = Field(default=None, description="end of the window (same forms)")
    by: Literal["agent", "provider", "model", "project", "schedule", "day"] = "agent"
    agentId: str | None = Field(default=None, description="only this agent (id, prefix, title)")


class UsageQueryResult(WireModel):
    by: str
    since: str | None = Field(description="the window's start as resolved (ISO 8601)")
    until: str | None
    groups: list[UsageTotals] = Field(description="most expensive first, unknown cost last")
    total: UsageTotals


class UsageAgentParams(WireModel):
    agentId: str


class UsageAgentResult(WireModel):
    agentId: str
    usage: UsageTotals
    budget: AgentBudget | None = Field(default=None, description="the agent's cap, if any")


class UsageBudgetParams(WireModel):
    agentId: str
    budget: AgentBudget | None = Field(
        default=None, description="the new cap {tokens?, usd?} (replaces the old one)"
    )
    clear: bool = Field(default=False, description="lift the budget")


def method_groups(ref: ServiceRef[UsageService]) -> list[RpcMethodGroup]:
    """The ``usage`` group, reaching its service through ``ref``."""

    async def query(ctx: RpcContext, params: UsageQueryParams) -> UsageQueryResult:
        report = await ref.get().report(
            since=params.since, until=params.until, by=params.by, agent=params.agentId
        )
        return UsageQueryResult(
            by=report.by,
            since=report.since,
            until=report.until,
            groups=[_wire(group) for group in report.groups],
            total=_wire(report.total),
        )

    async def agent(ctx: RpcContext, params: UsageAgentParams) -> UsageAgentResult:
        service = ref.get()
        record = await service.agent_record(params.agentId)
        totals = await service.agent_totals(record.id)
        return UsageAgentResult(agentId=record.id, usage=_wire(totals), budget=record.budget)

    async def budget(ctx: RpcContext, params: UsageBudgetParams) -> UsageAgentResult:
        if params.clear == (params.budget is not None):
            raise InvalidParams("give a budget or clear: true (exactly one)")
        service = ref.get()
        record = await service.set_budget(params.agentId, None if params.clear else params.budget)
        totals = await service.agent_totals(record.id)
        return UsageAgentResult(agentId=record.id, usage=_wire(totals), budget=record.budget)

    return [
        RpcMethodGroup(
            "usage",
            [
                RpcMethod(
                    "usage.query",
                    query,
                    UsageQueryParams,
                    UsageQueryResult,
                    "What agents spent (turns, tokens, USD) over a window, grouped",
                ),
                RpcMethod(
                    "usage.agent",
                    agent,
                    UsageAgentParams,
                    UsageAgentResult,
                    "Everything one agent spent, and its budget",
                ),
                RpcMethod(
                    "usage.budget",
                    budget,
                    UsageBudgetParams,
                    UsageAgentResult,
                    "Set or lift an agent's budget; raising it past what it spent lets its "
                    "prompts run again",
                ),
            ],
        )
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """Usage has no stream of its own: agent records carry budget state."""
    return {}
