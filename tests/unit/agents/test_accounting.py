"""What a usage record says about a turn, the periods of daemon budgets and the windows of
``paseo usage``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.events import TurnCanceled, TurnCompleted, TurnStarted, Usage
from paseo_hookspecs.records import AgentBudget, AgentRecord, TimelineEntry
from paseo_hookspecs.usage import UsageTotals

from paseo.agents.accounting import Accounting, usage_record
from paseo.agents.budgets import period_start, reached
from paseo.agents.timeline import AgentTimeline, Committed
from paseo.plugins.drivers import load_driver
from paseo.usage.window import resolve_since

AGENT = "aaaa1111-0000-4000-8000-000000000001"
NOW = datetime(2026, 12, 2, 15, 30, tzinfo=UTC)  # a Wednesday


def _record(**fields: object) -> AgentRecord:
    base: dict[str, object] = {
        "id": "agent-1",
        "provider": "claude",
        "cwd": "/w",
        "workspaceId": "ws-1",
        "createdAt": "2026-12-01T00:00:00.000Z",
        "updatedAt": "2026-12-01T00:00:00.000Z",
        "runtimeInfo": {"provider": "claude", "model": "sonnet"},
    }
    return AgentRecord.model_validate({**base, **fields})


def _entry(seq: int) -> TimelineEntry:
    return TimelineEntry(
        agentId="agent-1", seq=seq, epoch="e1", timestamp="2026-12-02T10:00:00.000Z", event={}
    )


def test_a_completed_turn_records_what_the_provider_reported_and_nothing_else() -> None:
    usage = Usage(inputTokens=10, outputTokens=2, cachedInputTokens=5, costUsd=0.01)
    event = TurnCompleted(provider="claude", usage=usage)
    record = usage_record(_record(), _entry(7), event, project_id="p-1")
    assert record is not None
    assert (record.id, record.at, record.outcome) == (
        "agent-1:e1:7",
        _entry(7).timestamp,
        "completed",
    )
    assert (record.model, record.projectId, record.workspaceId) == ("sonnet", "p-1", "ws-1")
    assert (record.inputTokens, record.outputTokens, record.cacheReadTokens) == (10, 2, 5)
    assert record.cacheWriteTokens is None  # not reported: not guessed
    assert (record.source, record.sourceId) == (None, None)


def test_sources_come_from_labels_and_metadata_agents_count_for_the_agent_served() -> None:
    scheduled = _record(labels={"paseo.schedule-id": "s-9", "paseo.schedule-run": "3"})
    record = usage_record(scheduled, _entry(1), TurnCanceled(provider="claude"), project_id=None)
    assert record is not None
    assert (record.source, record.sourceId, record.outcome) == ("schedule", "s-9", "canceled")
    assert record.costUsd is None
    titling = _record(labels={"paseo.metadata": "title", "paseo.metadata-for": "agent-0"})
    record = usage_record(titling, _entry(2), TurnCompleted(provider="claude"), project_id=None)
    assert record is not None
    assert (record.agentId, record.source, record.sourceId) == ("agent-0", "metadata", "title")
    assert (
        usage_record(_record(), _entry(3), TurnStarted(provider="claude"), project_id=None) is None
    )


def test_budgets_are_reached_at_the_cap_counting_every_token_kind() -> None:
    spent = UsageTotals(key="a", turns=2, inputTokens=600, outputTokens=300, cacheReadTokens=100)
    assert reached(AgentBudget(tokens=1001), spent) is None
    assert reached(AgentBudget(tokens=1000), spent) == "1000 of its 1000 tokens"
    assert reached(AgentBudget(usd=0.5), spent) is None  # no reported cost: nothing spent
    assert reached(None, spent) is None


def test_budget_periods_start_at_the_utc_day_iso_week_and_month() -> None:
    assert period_start("daily", NOW) == datetime(2026, 12, 2, tzinfo=UTC)
    assert period_start("weekly", NOW) == datetime(2026, 11, 30, tzinfo=UTC)
    assert period_start("monthly", NOW) == datetime(2026, 12, 1, tzinfo=UTC)


def test_usage_windows() -> None:
    assert resolve_since("7d", NOW) == "2026-11-25T15:30:00.000Z"
    assert resolve_since("90m", NOW) == "2026-12-02T14:00:00.000Z"
    assert resolve_since("2026-11-30", NOW) == "2026-11-30T00:00:00.000Z"
    assert resolve_since("2026-11-30T10:00:00+02:00", NOW) == "2026-11-30T08:00:00.000Z"
    assert resolve_since(None, NOW) is None
    with pytest.raises(InvalidParams, match="30m, 12h, 7d, 2w"):
        resolve_since("last week", NOW)


@pytest.mark.parametrize("driver", ["json", "sqlite"])
def test_a_turns_usage_is_durable_with_its_end_before_anything_applies_it(
    driver: str, tmp_path: Path
) -> None:
    """The record is written with the terminal entry, not after it: a daemon that dies before
    it applied the entry (here: a commit that never accounts) still has the turn's usage."""

    async def main() -> None:
        store = load_driver("paseo.store", driver)(tmp_path, None)
        await store.open()
        record = _record(id=AGENT)
        accounting = Accounting(store)
        committed: list[Committed] = []

        async def commit(batch: list[Committed]) -> None:
            committed.extend(batch)  # the roster's accounting never runs

        timeline = AgentTimeline(
            AGENT,
            store.timeline,
            commit,
            usage_of=lambda entry, event: accounting.usage_of(record, entry, event),
        )
        await timeline.add(TurnStarted(provider="claude"))
        usage = Usage(inputTokens=40, outputTokens=2, costUsd=0.25)
        await timeline.add(TurnCompleted(provider="claude", usage=usage))
        await asyncio.wait_for(timeline.drain(), 30)
        await store.close()
        assert [c.usage is not None for c in committed] == [False, True]
        reopened = load_driver("paseo.store", driver)(tmp_path, None)
        await reopened.open()
        try:
            last = await reopened.timeline.last(AGENT)
            assert last is not None
            assert last.event["type"] == "turn_completed"
            totals = await Accounting(reopened).totals(AGENT)
            assert (totals.turns, totals.inputTokens, totals.costUsd) == (1, 40, 0.25)
            assert totals == await Accounting(reopened).totals(AGENT)
        finally:
            await reopened.close()

    asyncio.run(main())
