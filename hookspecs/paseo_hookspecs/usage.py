"""Usage accounting: one record per finished turn, and the totals a query returns.

A :class:`UsageRecord` is written when a turn ends (completed, canceled or failed) with what the
provider reported: tokens and cost stay ``None`` when the provider did not say (never guessed).
Each record names who spent it (agent, provider, model, project, workspace) and what caused it
(``source``: a schedule, loop or Hub execution, or ``metadata`` for an internal agent that served
``agentId``).

Stores keep records durable and bounded: past a retention window a store may replace a day's
records by *roll-ups* — one record per day and dimension tuple whose ``turns`` counts the turns
it sums (:func:`roll_up`). Queries answer the same totals before and after.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, get_args

from paseo_hookspecs.records._base import RecordModel

UsageGroup = Literal["agent", "provider", "model", "project", "schedule", "day"]
"""What a query groups totals by (``schedule``: the source that caused the turns)."""

USAGE_GROUPS: tuple[str, ...] = get_args(UsageGroup)

TOKEN_FIELDS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


class UsageRecord(RecordModel):
    """What one turn (or, rolled up, one day's turns of one dimension tuple) spent."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"turns"})

    id: str
    at: str
    """When the turn ended (ISO 8601, UTC); a roll-up's day at midnight."""
    agentId: str
    provider: str
    model: str | None = None
    projectId: str | None = None
    workspaceId: str | None = None
    source: str | None = None
    """``schedule``, ``loop``, ``hub`` or ``metadata``; ``None`` for a turn a user asked for."""
    sourceId: str | None = None
    """The schedule, loop or execution id (for ``metadata``: the metadata task)."""
    outcome: Literal["completed", "canceled", "failed"] | None = None
    """How the turn ended; ``None`` on a roll-up."""
    turns: int = 1
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheReadTokens: int | None = None
    cacheWriteTokens: int | None = None
    costUsd: float | None = None


@dataclass
class UsageTotals:
    """One group's totals. A token or cost total is ``None`` when no turn of the group reported
    it; ``costUnknownTurns`` counts the turns whose cost was not reported."""

    key: str | None
    turns: int = 0
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheReadTokens: int | None = None
    cacheWriteTokens: int | None = None
    costUsd: float | None = None
    costUnknownTurns: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def group_key(record: UsageRecord, by: str) -> str | None:
    """The group ``record`` belongs to."""
    if by == "agent":
        return record.agentId
    if by == "provider":
        return record.provider
    if by == "model":
        return record.model
    if by == "project":
        return record.projectId
    if by == "schedule":
        return f"{record.source}:{record.sourceId}" if record.source else None
    if by == "day":
        return record.at[:10]
    raise ValueError(f"unknown usage grouping {by!r} (one of {', '.join(USAGE_GROUPS)})")


def _add(total: float | int | None, value: float | int | None) -> Any:
    if value is None:
        return total
    return value if total is None else total + value


def add_to(totals: UsageTotals, record: UsageRecord) -> None:
    """Count ``record`` into ``totals``."""
    totals.turns += record.turns
    for name in TOKEN_FIELDS:
        setattr(totals, name, _add(getattr(totals, name), getattr(record, name)))
    totals.costUsd = _add(totals.costUsd, record.costUsd)
    if record.costUsd is None:
        totals.costUnknownTurns += record.turns


def sort_totals(totals: Iterable[UsageTotals]) -> list[UsageTotals]:
    """Most expensive first (unknown cost last), then most turns, then by key."""
    return sorted(
        totals,
        key=lambda t: (t.costUsd is None, -(t.costUsd or 0.0), -t.turns, t.key or ""),
    )


def aggregate(records: Iterable[UsageRecord], by: str) -> list[UsageTotals]:
    """Totals of ``records`` per group, sorted by :func:`sort_totals`."""
    groups: dict[str | None, UsageTotals] = {}
    for record in records:
        key = group_key(record, by)
        add_to(groups.setdefault(key, UsageTotals(key)), record)
    return sort_totals(groups.values())


_DIMENSIONS = ("agentId", "provider", "model", "projectId", "workspaceId", "source", "sourceId")


def roll_up(records: Iterable[UsageRecord]) -> list[UsageRecord]:
    """Records summed per day and dimension tuple (the bounded form of old records)."""
    rolled: dict[tuple[Any, ...], UsageRecord] = {}
    for record in records:
        day = record.at[:10]
        dims = tuple(getattr(record, name) for name in _DIMENSIONS)
        key = (day, *dims)
        current = rolled.get(key)
        if current is None:
            digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
            current = UsageRecord(
                id=f"rollup-{day}-{digest}",
                at=f"{day}T00:00:00Z",
                turns=0,
                **dict(zip(_DIMENSIONS, dims, strict=True)),
            )
            rolled[key] = current
        current.turns += record.turns
        for name in (*TOKEN_FIELDS, "costUsd"):
            setattr(current, name, _add(getattr(current, name), getattr(record, name)))
    return list(rolled.values())


class UsageRepository(ABC):
    """Usage records (see the module docstring)."""

    @abstractmethod
    async def add(self, record: UsageRecord) -> bool:
        """Store ``record`` durably; ``False`` (nothing written) when a record with its id is
        stored already, so a retried write never counts a turn twice."""

    @abstractmethod
    async def query(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        agent_id: str | None = None,
        group_by: UsageGroup = "agent",
    ) -> list[UsageTotals]:
        """Totals of the records with ``since <= at < until`` (ISO 8601 strings; ``None``:
        unbounded), optionally of one agent, grouped by ``group_by`` and sorted by
        :func:`sort_totals`. A bound inside a rolled-up day counts that whole day when the day
        starts at or after ``since`` and before ``until``. ``ValueError`` for an unknown
        grouping."""
