"""The ``usage`` repository (optional: a driver without one skips these tests)."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_hookspecs.errors import Conflict
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import TimelineEntry
from paseo_hookspecs.usage import UsageRecord, UsageRepository, UsageTotals

from paseo.testing.store_conformance.base import StoreSuite, store_test
from paseo.testing.store_conformance.records import timeline_entry_data


def usage_data(n: int, **overrides: Any) -> dict[str, Any]:
    """A usage record's JSON: turn ``n`` of agent ``a{n % 2}`` on provider ``claude``."""
    data: dict[str, Any] = {
        "id": f"turn-{n}",
        "at": f"2026-11-{10 + n % 3:02d}T12:00:{n % 60:02d}.000Z",
        "agentId": f"a{n % 2}",
        "provider": "claude",
        "model": "sonnet",
        "projectId": "p1",
        "workspaceId": "w1",
        "outcome": "completed",
        "inputTokens": 100 + n,
        "outputTokens": 10 + n,
        "cacheReadTokens": n,
        "cacheWriteTokens": 2 * n,
        "costUsd": 0.25 * n,
    }
    data.update(overrides)
    return data


def _usage(store: Store) -> UsageRepository:
    usage: UsageRepository | None = getattr(store, "usage", None)
    if usage is None:
        pytest.skip("this store keeps no usage records")
    return usage


def _by_key(totals: list[UsageTotals]) -> dict[str | None, dict[str, Any]]:
    return {t.key: t.to_json() for t in totals}


class UsageTests(StoreSuite):
    """The ``usage`` repository: adds are idempotent by id, totals survive a restart and a
    roll-up, unknown stays unknown."""

    @store_test
    async def test_usage_totals_by_every_grouping(self, store: Store) -> None:
        usage = _usage(store)
        for n in range(1, 5):
            assert await usage.add(UsageRecord.model_validate(usage_data(n))) is True
        other = usage_data(
            5,
            agentId="a1",
            provider="codex",
            model=None,
            costUsd=None,
            cacheWriteTokens=None,
            source="schedule",
            sourceId="s1",
        )
        assert await usage.add(UsageRecord.model_validate(other)) is True
        assert await usage.add(UsageRecord.model_validate(usage_data(1))) is False
        for _ in range(2):
            by_agent = await usage.query(group_by="agent")
            assert [t.key for t in by_agent] == ["a0", "a1"]  # most expensive first
            assert _by_key(by_agent)["a0"] == {
                "key": "a0",
                "turns": 2,
                "inputTokens": 206,
                "outputTokens": 26,
                "cacheReadTokens": 6,
                "cacheWriteTokens": 12,
                "costUsd": 1.5,
                "costUnknownTurns": 0,
            }
            assert _by_key(by_agent)["a1"] == {
                "key": "a1",
                "turns": 3,
                "inputTokens": 309,
                "outputTokens": 39,
                "cacheReadTokens": 9,
                "cacheWriteTokens": 8,
                "costUsd": 1.0,
                "costUnknownTurns": 1,
            }
            by_provider = _by_key(await usage.query(group_by="provider"))
            assert by_provider["codex"]["costUsd"] is None  # never guessed
            assert by_provider["codex"]["cacheWriteTokens"] is None
            assert by_provider["claude"]["turns"] == 4
            by_model = _by_key(await usage.query(group_by="model"))
            assert set(by_model) == {"sonnet", None}
            by_schedule = _by_key(await usage.query(group_by="schedule"))
            assert by_schedule["schedule:s1"]["turns"] == 1
            assert by_schedule[None]["turns"] == 4
            by_day = _by_key(await usage.query(group_by="day"))
            assert {k: v["turns"] for k, v in by_day.items()} == {
                "2026-11-10": 1,
                "2026-11-11": 2,
                "2026-11-12": 2,
            }
            assert _by_key(await usage.query(group_by="project"))["p1"]["turns"] == 5
            store = await self.reopen(store)
            usage = _usage(store)

    @store_test
    async def test_usage_filters(self, store: Store) -> None:
        usage = _usage(store)
        for n in range(1, 7):
            await usage.add(UsageRecord.model_validate(usage_data(n)))
        since = await usage.query(since="2026-11-11", group_by="day")
        assert sorted(str(t.key) for t in since) == ["2026-11-11", "2026-11-12"]
        until = await usage.query(until="2026-11-11", group_by="day")
        assert [t.key for t in until] == ["2026-11-10"]
        one = await usage.query(agent_id="a0", group_by="provider")
        assert [(t.key, t.turns) for t in one] == [("claude", 3)]
        with pytest.raises(ValueError, match="grouping"):
            await usage.query(group_by="colour")  # type: ignore[arg-type]

    @store_test
    async def test_old_days_roll_up_with_the_same_totals(self, store: Store) -> None:
        usage = _usage(store)
        old = [
            usage_data(n, id=f"old-{n}", at=f"2020-01-0{1 + n % 2}T08:00:00.000Z")
            for n in range(1, 9)
        ]
        for data in old:
            await usage.add(UsageRecord.model_validate(data))
        await usage.add(UsageRecord.model_validate(usage_data(1, at="2999-01-01T00:00:00.000Z")))
        groups = ("agent", "provider", "model", "project", "schedule", "day")
        before = {g: _by_key(await usage.query(group_by=g)) for g in groups}  # type: ignore[arg-type]
        store = await self.reopen(store)  # rolls 2020 up (past any retention window)
        usage = _usage(store)
        after = {g: _by_key(await usage.query(group_by=g)) for g in groups}  # type: ignore[arg-type]
        assert after == before
        # A late record of a rolled-up day joins its roll-up at the next open.
        late = usage_data(9, id="late", at="2020-01-01T09:00:00.000Z")
        assert await usage.add(UsageRecord.model_validate(late)) is True
        store = await self.reopen(store)
        usage = _usage(store)
        day = _by_key(await usage.query(group_by="day"))["2020-01-01"]
        assert day["turns"] == before["day"]["2020-01-01"]["turns"] + 1
        assert day["costUsd"] == pytest.approx(before["day"]["2020-01-01"]["costUsd"] + 2.25)

    # -------------------------------------------------- a turn's end and its usage, atomically

    @staticmethod
    def _entries(agent_id: str, seqs: range) -> list[TimelineEntry]:
        return [TimelineEntry.model_validate(timeline_entry_data(agent_id, s)) for s in seqs]

    @store_test
    async def test_append_with_usage_writes_the_entries_and_their_usage(self, store: Store) -> None:
        usage = _usage(store)
        agent_id = await self._agent_with_timeline(store, [1])
        ending = self._entries(agent_id, range(2, 4))
        turn = UsageRecord.model_validate(usage_data(1, id=f"{agent_id}:ep-1:3", agentId="a0"))
        await store.timeline.append_with_usage(ending, [turn])
        for _ in range(2):
            assert [e.seq for e in await store.timeline.read(agent_id)] == [1, 2, 3]
            totals = _by_key(await usage.query(group_by="agent"))
            assert totals["a0"]["turns"] == 1
            assert totals["a0"]["inputTokens"] == 101
            store = await self.reopen(store)
            usage = _usage(store)
        # A record stored already is skipped, never counted twice.
        await store.timeline.append_with_usage(self._entries(agent_id, range(4, 5)), [turn])
        assert [e.seq for e in await store.timeline.read(agent_id)] == [1, 2, 3, 4]
        assert _by_key(await usage.query(group_by="agent"))["a0"]["turns"] == 1
        # Entries alone (no usage) append as `append` does.
        await store.timeline.append_with_usage(self._entries(agent_id, range(5, 6)), [])
        assert (await store.timeline.last(agent_id)).seq == 5  # type: ignore[union-attr]

    @store_test
    async def test_append_with_usage_refused_writes_no_usage(self, store: Store) -> None:
        usage = _usage(store)
        agent_id = await self._agent_with_timeline(store, [1, 2])
        turn = UsageRecord.model_validate(usage_data(1, id=f"{agent_id}:ep-1:2", agentId="a0"))
        with pytest.raises(Conflict):
            # seq 2 is stored: nothing of this append is written, its usage neither.
            await store.timeline.append_with_usage(self._entries(agent_id, range(2, 3)), [turn])
        assert await usage.query(group_by="agent") == []
        store = await self.reopen(store)
        assert await _usage(store).query(group_by="agent") == []
        assert [e.seq for e in await store.timeline.read(agent_id)] == [1, 2]
