"""Agent budgets: what an agent may spend, and the refusal once it has.

An agent's ``budget`` (``tokens`` and/or ``usd``) caps what its turns spent over its life, as
the usage records total it (:mod:`paseo.agents.accounting`). Spent is compared when a turn ends
(the agent then gets attention ``budget``), when a provider reports what the running turn spent
so far (``usage_reported``: the turn is interrupted after that step, :func:`with_turn`) and
before each prompt: a prompt to an agent at or
over its budget is refused with :class:`BudgetExceeded`, before anything reaches its program.
Tokens count input, output, cache read and cache write together; a cap in USD counts only the
cost the provider reported (a turn without one adds nothing, never a guess).

``daemon.budgets`` (config) caps what the whole daemon, one project or one provider spends in
the current UTC day, ISO week or month: a prompt that falls under a spent one is refused the
same way, and a schedule whose run is refused pauses itself with the refusal as its reason.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.events import Usage
from paseo_hookspecs.records import AgentBudget, AgentRecord
from paseo_hookspecs.usage import TOKEN_FIELDS, UsageGroup, UsageRepository, UsageTotals

if TYPE_CHECKING:
    from paseo.config.models import BudgetConfig


def iso(moment: datetime) -> str:
    """``moment`` as stored usage times are written (UTC, milliseconds, ``Z``)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


BUDGET_EXCEEDED = "budget_exceeded"


class BudgetExceeded(PaseoError):
    """A prompt refused because the agent (or a daemon budget) has spent its budget."""

    code = BUDGET_EXCEEDED


def tokens_of(totals: UsageTotals) -> int:
    """Every token the totals count (unknown counts add nothing)."""
    return sum(getattr(totals, name) or 0 for name in TOKEN_FIELDS)


def with_turn(totals: UsageTotals, usage: Usage) -> UsageTotals:
    """``totals`` plus what the running turn reported so far (its tokens and cost)."""
    so_far = UsageTotals(
        key=totals.key,
        turns=1,
        inputTokens=usage.inputTokens,
        outputTokens=usage.outputTokens,
        cacheReadTokens=usage.cachedInputTokens,
        cacheWriteTokens=usage.cacheWriteTokens,
        costUsd=usage.costUsd,
    )
    return total_of([totals, so_far])


def reached(budget: AgentBudget | None, totals: UsageTotals) -> str | None:
    """What of ``budget`` the totals reached (``"1500 of 1000 tokens"``), or ``None``."""
    if budget is None:
        return None
    spent_tokens = tokens_of(totals)
    if budget.tokens is not None and spent_tokens >= budget.tokens:
        return f"{spent_tokens} of its {budget.tokens} tokens"
    spent_usd = totals.costUsd or 0.0
    if budget.usd is not None and spent_usd >= budget.usd:
        return f"${spent_usd:.4f} of its ${budget.usd:.4f}"
    return None


def refusal(record: AgentRecord, what: str) -> BudgetExceeded:
    """The error a prompt to ``record`` gets once it spent ``what``."""
    short = record.id[:8]
    return BudgetExceeded(
        f"agent {short} has spent {what} budget, so the prompt was not sent; raise it with "
        f"`paseo agent budget {short} --tokens N` (or `--usd X`), or lift it with "
        f"`paseo agent budget {short} --clear`",
        data={"agentId": record.id, "budget": record.budget.model_dump() if record.budget else {}},
    )


# ------------------------------------------------------------------ daemon budgets


def period_start(period: str, now: datetime) -> datetime:
    """Where the current ``daily``, ``weekly`` (ISO, from Monday) or ``monthly`` period began
    (UTC)."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "weekly":
        return day - timedelta(days=day.weekday())
    if period == "monthly":
        return day.replace(day=1)
    return day


def _next_start(period: str, start: datetime) -> datetime:
    if period == "weekly":
        return start + timedelta(days=7)
    if period == "monthly":
        return (start + timedelta(days=32)).replace(day=1)
    return start + timedelta(days=1)


def _scope_text(budget: BudgetConfig) -> str:
    return "the daemon" if budget.scope == "daemon" else f"{budget.scope} {budget.id}"


async def daemon_budget_refusal(
    budgets: Sequence[BudgetConfig],
    *,
    provider: str,
    project_id: str | None,
    repository: UsageRepository | None,
    now: datetime | None = None,
    running: Usage | None = None,
) -> BudgetExceeded | None:
    """The refusal of the first of ``budgets`` (``daemon.budgets``) that applies to an agent of
    ``provider`` in ``project_id`` and is spent in its current period, or ``None``. ``running``
    is what a turn still running reported so far (not recorded yet): counted with the rest."""
    if repository is None:
        return None
    moment = now or datetime.now(UTC)
    for index, budget in enumerate(budgets):
        if budget.scope == "project" and budget.id != project_id:
            continue
        if budget.scope == "provider" and budget.id != provider:
            continue
        start = period_start(budget.period, moment)
        by: UsageGroup = "project" if budget.scope == "project" else "provider"
        groups = await repository.query(since=iso(start), group_by=by)
        if budget.scope != "daemon":
            groups = [g for g in groups if g.key == budget.id]
        totals = total_of(groups)
        if running is not None:
            totals = with_turn(totals, running)
        cap = AgentBudget(tokens=budget.tokens, usd=budget.usd)
        what = reached(cap, totals)
        if what is None:
            continue
        field = (
            "tokens" if budget.tokens is not None and tokens_of(totals) >= budget.tokens else "usd"
        )
        spent = f"the {budget.period} budget of {_scope_text(budget)} is spent ({what})"
        raise_it = f"`paseo config set daemon.budgets[{index}].{field} VALUE`"
        return BudgetExceeded(
            f"{spent}, so the prompt was not sent; it renews at "
            f"{iso(_next_start(budget.period, start))}, or raise it with {raise_it}",
            data={
                "budget": f"daemon.budgets[{index}]",
                "scope": budget.scope,
                "id": budget.id,
                "spent": f"{spent}; raise it with {raise_it}",
            },
        )
    return None


def total_of(groups: Sequence[UsageTotals]) -> UsageTotals:
    """The sum of ``groups`` (a total no group knows stays unknown)."""
    total = UsageTotals(key=None)
    for group in groups:
        total.turns += group.turns
        total.costUnknownTurns += group.costUnknownTurns
        for name in (*TOKEN_FIELDS, "costUsd"):
            value = getattr(group, name)
            if value is not None:
                so_far = getattr(total, name)
                setattr(total, name, value if so_far is None else so_far + value)
    return total


class DaemonCaps:
    """``daemon.budgets`` applied to one agent: before a prompt (:meth:`check`) and as a running
    turn reports what it spent so far (:meth:`reached`). ``caps`` is read at each call, so a
    ``paseo reload`` applies at once."""

    def __init__(
        self,
        caps: Callable[[], Sequence[BudgetConfig] | None],
        project_of: Callable[[str | None], Awaitable[str | None]],
        repository: UsageRepository | None,
    ) -> None:
        self._caps = caps
        self._project_of = project_of
        self._repository = repository

    async def refusal(
        self, record: AgentRecord, running: Usage | None = None
    ) -> BudgetExceeded | None:
        caps = self._caps()
        if not caps or record.internal:
            return None
        return await daemon_budget_refusal(
            caps,
            provider=record.provider,
            project_id=await self._project_of(record.workspaceId),
            repository=self._repository,
            running=running,
        )

    async def check(self, record: AgentRecord) -> None:
        """Raise the refusal of a spent cap that covers ``record``'s agent."""
        refusal = await self.refusal(record)
        if refusal is not None:
            raise refusal

    async def reached(self, record: AgentRecord, running: Usage) -> str | None:
        """The spent cap a running turn's report reaches (the roster stops the turn), or
        ``None``."""
        refusal = await self.refusal(record, running)
        return None if refusal is None else str(refusal.data.get("spent") or refusal.message)
