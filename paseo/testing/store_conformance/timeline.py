"""The ``timeline`` repository."""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    TimelineEntry,
    dump_record,
    new_agent_id,
)

from paseo.testing.store_conformance.base import StoreSuite, _raises, store_test
from paseo.testing.store_conformance.records import (
    _entries,
    timeline_entry_data,
)


class TimelineTests(StoreSuite):
    """The ``timeline`` repository."""

    @store_test
    async def test_timeline_round_trips_every_field(self, store: Store) -> None:
        agent_id = await self._agent_with_timeline(store, [])
        entries = [timeline_entry_data(agent_id, s) for s in (0, 1, 2)]
        await store.timeline.append([TimelineEntry.model_validate(e) for e in entries])
        assert [dump_record(e) for e in await store.timeline.read(agent_id)] == entries
        store = await self.reopen(store)
        assert [dump_record(e) for e in await store.timeline.read(agent_id)] == entries
        last = await store.timeline.last(agent_id)
        assert last is not None
        assert dump_record(last) == entries[-1]

    @store_test
    async def test_timeline_read_windows(self, store: Store) -> None:
        seqs = [1, 2, 3, 5, 8, 13, 21]
        agent_id = await self._agent_with_timeline(store, seqs[:3])
        # Appends in several batches, with gaps: seq is strictly increasing, not contiguous.
        await store.timeline.append(_entries(agent_id, seqs[3:5]))
        await store.timeline.append(_entries(agent_id, seqs[5:]))

        async def read(**kwargs: Any) -> list[int]:
            return [e.seq for e in await store.timeline.read(agent_id, **kwargs)]

        assert await read() == seqs
        assert await read(after_seq=3) == [5, 8, 13, 21]
        assert await read(after_seq=4) == [5, 8, 13, 21]
        assert await read(before_seq=13) == [1, 2, 3, 5, 8]
        assert await read(after_seq=2, before_seq=13) == [3, 5, 8]
        assert await read(after_seq=3, before_seq=5) == []
        assert await read(after_seq=21) == []
        assert await read(before_seq=1) == []
        assert await read(limit=2) == [1, 2]
        assert await read(limit=2, tail=True) == [13, 21]
        assert await read(limit=100, tail=True) == seqs
        assert await read(tail=True) == seqs
        assert await read(after_seq=1, limit=3) == [2, 3, 5]
        assert await read(after_seq=2, before_seq=13, limit=2) == [3, 5]
        assert await read(after_seq=2, before_seq=13, limit=2, tail=True) == [5, 8]
        assert await store.timeline.read(new_agent_id()) == []

    @store_test
    async def test_timeline_last(self, store: Store) -> None:
        agent_id = await self._agent_with_timeline(store, [])
        assert await store.timeline.last(agent_id) is None
        await store.timeline.append(_entries(agent_id, [4, 9]))
        last = await store.timeline.last(agent_id)
        assert last is not None
        assert last.seq == 9
        await store.timeline.append(_entries(agent_id, [10]))
        last = await store.timeline.last(agent_id)
        assert last is not None
        assert last.seq == 10

    @store_test
    async def test_timeline_rejects_non_increasing_seq(self, store: Store) -> None:
        """A batch with a seq not above every stored one, or not increasing, changes nothing."""
        agent_id = await self._agent_with_timeline(store, [0, 1, 2])
        for seqs in ([2], [1], [0, 3], [3, 3], [3, 5, 4], [4, 5, 6, 2], [5, 6, 7, 7]):
            await _raises(Conflict, store.timeline.append(_entries(agent_id, seqs)))
        assert [e.seq for e in await store.timeline.read(agent_id)] == [0, 1, 2]
        store = await self.reopen(store)
        assert [e.seq for e in await store.timeline.read(agent_id)] == [0, 1, 2]
        await store.timeline.append(_entries(agent_id, [3]))
        assert [e.seq for e in await store.timeline.read(agent_id)] == [0, 1, 2, 3]

    @store_test
    async def test_timeline_rejects_mixed_agents(self, store: Store) -> None:
        first = await self._agent_with_timeline(store, [])
        second = await self._agent_with_timeline(store, [])
        mixed = _entries(first, [0, 1]) + _entries(second, [2])
        await _raises((InvalidParams, Conflict), store.timeline.append(mixed))
        assert await store.timeline.read(first) == []
        assert await store.timeline.read(second) == []

    @store_test
    async def test_timeline_is_per_agent(self, store: Store) -> None:
        first = await self._agent_with_timeline(store, [0, 1, 2])
        second = await self._agent_with_timeline(store, [0, 1])
        # The same seq on another agent is no conflict.
        await store.timeline.append(_entries(second, [2, 3]))
        assert [e.seq for e in await store.timeline.read(first)] == [0, 1, 2]
        assert [e.seq for e in await store.timeline.read(second)] == [0, 1, 2, 3]
        assert {e.agentId for e in await store.timeline.read(second)} == {second}

    @store_test
    async def test_timeline_delete(self, store: Store) -> None:
        first = await self._agent_with_timeline(store, [0, 1, 2])
        second = await self._agent_with_timeline(store, [0])
        await store.timeline.delete(first)
        assert await store.timeline.read(first) == []
        assert await store.timeline.last(first) is None
        await store.timeline.delete(new_agent_id())
        # A deleted timeline starts over: every stored seq is gone.
        await store.timeline.append(_entries(first, [0], epoch="ep-2"))
        store = await self.reopen(store)
        entries = await store.timeline.read(first)
        assert [(e.seq, e.epoch) for e in entries] == [(0, "ep-2")]
        assert len(await store.timeline.read(second)) == 1
        assert await store.agents.get(first) is not None
