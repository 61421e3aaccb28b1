"""Agent budgets: what an agent may spend, and the refusal once it has.

An agent's ``budget`` (``tokens`` and/or ``usd``) caps what its turns spent over its life, as
the usage records total it (:mod:`paseo.agents.accounting`). Spent is compared when a turn ends
(the agent then gets attention ``budget``) and before each prompt: a prompt to an agent at or
over its budget is refused with :class:`BudgetExceeded`, before anything reaches its program.
Tokens count input, output, cache read and cache write together; a cap in USD counts only the
cost the provider reported (a turn without one adds nothing, never a guess).
"""

from __future__ import annotations

from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.records import AgentBudget, AgentRecord
from paseo_hookspecs.usage import TOKEN_FIELDS, UsageTotals

BUDGET_EXCEEDED = "budget_exceeded"


class BudgetExceeded(PaseoError):
    """A prompt refused because the agent (or a daemon budget) has spent its budget."""

    code = BUDGET_EXCEEDED


def tokens_of(totals: UsageTotals) -> int:
    """Every token the totals count (unknown counts add nothing)."""
    return sum(getattr(totals, name) or 0 for name in TOKEN_FIELDS)


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
