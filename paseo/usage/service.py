"""What agents spent: usage totals over a window, grouped, from the store's usage records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentBudget, AgentRecord
from paseo_hookspecs.usage import USAGE_GROUPS, UsageGroup, UsageTotals

from paseo.agents.budgets import total_of
from paseo.usage.window import resolve_since

if TYPE_CHECKING:
    from paseo_hookspecs.usage import UsageRepository

    from paseo.agents.manager import AgentService


@dataclass(frozen=True)
class UsageReport:
    """Totals per group, most expensive first, and their sum."""

    by: str
    since: str | None
    until: str | None
    groups: list[UsageTotals]
    total: UsageTotals


class UsageService:
    """See the module docstring."""

    def __init__(self, store: Store, agents: AgentService) -> None:
        self._store = store
        self._agents = agents

    def _repository(self) -> UsageRepository:
        repository: UsageRepository | None = getattr(self._store, "usage", None)
        if repository is None:
            raise Unavailable(
                f"the {self._store.name!r} store keeps no usage records; "
                "the built-in json and sqlite drivers do"
            )
        return repository

    async def report(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        by: str = "agent",
        agent: str | None = None,
    ) -> UsageReport:
        """Totals over ``[since, until)`` grouped ``by``, optionally of one agent (id, prefix
        or title; a deleted agent by its exact id)."""
        if by not in USAGE_GROUPS:
            raise InvalidParams(
                f"cannot group usage by {by!r}: use one of {', '.join(USAGE_GROUPS)}",
                data={"by": by},
            )
        agent_id = await self.resolve_agent(agent) if agent is not None else None
        start, end = resolve_since(since), resolve_since(until)
        group: UsageGroup = by  # type: ignore[assignment]
        groups = await self._repository().query(
            since=start, until=end, agent_id=agent_id, group_by=group
        )
        return UsageReport(by, start, end, groups, total_of(groups))

    async def resolve_agent(self, reference: str) -> str:
        """The id of the agent ``reference`` names (id, unique prefix or title)."""
        return (await self._agents.get(reference)).record.id

    async def agent_record(self, reference: str) -> AgentRecord:
        return (await self._agents.get(reference)).record

    async def set_budget(self, reference: str, budget: AgentBudget | None) -> AgentRecord:
        """Set (``None``: lift) the agent's budget."""
        return (await self._agents.set_budget(reference, budget)).record

    async def agent_totals(self, agent_id: str) -> UsageTotals:
        """Everything one agent spent (all time)."""
        groups = await self._repository().query(agent_id=agent_id, group_by="agent")
        return groups[0] if groups else UsageTotals(key=agent_id)
