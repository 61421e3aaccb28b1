"""Tombstones and the ``trash`` repository: the purge transaction and the cleanup queue."""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import CleanupItem, dump_record
from paseo_hookspecs.store import AgentFilter

from paseo.testing.store_conformance.base import StoreSuite, _raises, store_test
from paseo.testing.store_conformance.records import _agent, _entries, agent_data, iso


def cleanup_item_data(agent_id: str, deleted_at: str, **overrides: Any) -> dict[str, Any]:
    """A queued cleanup item for the purge of ``agent_id``'s tombstone."""
    data: dict[str, Any] = {
        "id": f"cln_{agent_id}",
        "agentId": agent_id,
        "deletedAt": deleted_at,
        "createdAt": iso(1000),
        "roots": [f"agent-runs/{agent_id}"],
        "attempts": 0,
    }
    data.update(overrides)
    return data


class TrashTests(StoreSuite):
    """Tombstones (``deletedAt``) in agent listings, and the ``trash`` repository."""

    async def _tombstone(self, store: Store, created: int, deleted_at: str) -> str:
        data = agent_data(created_at=iso(created))
        await store.agents.insert(_agent(data))
        await store.timeline.append(_entries(data["id"], [0, 1, 2]))
        await store.agents.update(data["id"], {"deletedAt": deleted_at})
        return str(data["id"])

    @store_test
    async def test_tombstones_leave_listings_unless_asked_for(self, store: Store) -> None:
        live = agent_data(created_at=iso(1))
        await store.agents.insert(_agent(live))
        gone = await self._tombstone(store, 2, iso(50))
        for _ in range(2):
            assert [a.id for a in (await store.agents.list()).items] == [live["id"]]
            assert await store.agents.count() == 1
            trashed = AgentFilter(trashed=True)
            assert [a.id for a in (await store.agents.list(trashed)).items] == [gone]
            assert await store.agents.count(trashed) == 1
            both = AgentFilter(trashed=None)
            assert [a.id for a in (await store.agents.list(both)).items] == [live["id"], gone]
            got = await store.agents.get(gone)
            assert got is not None
            assert got.deletedAt == iso(50)
            store = await self.reopen(store)

    @store_test
    async def test_restore_removes_the_field_and_keeps_the_timeline(self, store: Store) -> None:
        data = agent_data(created_at=iso(1))
        await store.agents.insert(_agent(data))
        await store.timeline.append(_entries(data["id"], [0, 1]))
        await store.agents.update(data["id"], {"deletedAt": iso(9)})
        await store.agents.update(data["id"], {"deletedAt": None}, expect={"deletedAt": iso(9)})
        store = await self.reopen(store)
        restored = await store.agents.get(data["id"])
        assert restored is not None
        assert dump_record(restored) == data
        assert [e.seq for e in await store.timeline.read(data["id"])] == [0, 1]

    @store_test
    async def test_purge_removes_agent_and_timeline_and_queues_the_item(
        self, store: Store
    ) -> None:
        kept = await self._tombstone(store, 1, iso(10))
        gone = await self._tombstone(store, 2, iso(20))
        item = cleanup_item_data(gone, iso(20))
        assert await store.trash.purge(gone, deleted_at=iso(20), item=CleanupItem(**item))
        for _ in range(2):
            assert await store.agents.get(gone) is None
            assert await store.timeline.read(gone) == []
            assert [a.id for a in (await store.agents.list(AgentFilter(trashed=None))).items] == [
                kept
            ]
            assert [dump_record(i) for i in await store.trash.queued()] == [item]
            store = await self.reopen(store)
        assert [e.seq for e in await store.timeline.read(kept)] == [0, 1, 2]

    @store_test
    async def test_purge_refuses_what_is_not_that_tombstone(self, store: Store) -> None:
        live = agent_data(created_at=iso(1))
        await store.agents.insert(_agent(live))
        tomb = await self._tombstone(store, 2, iso(20))
        # A live agent, another deletion instant, an unknown id: nothing written.
        for agent_id, deleted_at in ((live["id"], iso(20)), (tomb, iso(21)), ("nobody", iso(20))):
            item = CleanupItem(**cleanup_item_data(agent_id, deleted_at))
            assert await store.trash.purge(agent_id, deleted_at=deleted_at, item=item) is False
        mismatched = CleanupItem(**cleanup_item_data(live["id"], iso(20)))
        await _raises(InvalidParams, store.trash.purge(tomb, deleted_at=iso(20), item=mismatched))
        store = await self.reopen(store)
        assert await store.trash.queued() == []
        assert await store.agents.get(tomb) is not None
        assert [e.seq for e in await store.timeline.read(tomb)] == [0, 1, 2]

    @store_test
    async def test_a_queued_item_id_is_not_reused(self, store: Store) -> None:
        first = await self._tombstone(store, 1, iso(10))
        second = await self._tombstone(store, 2, iso(10))
        shared_id = "cln_shared"
        item = CleanupItem(**cleanup_item_data(first, iso(10), id=shared_id))
        assert await store.trash.purge(first, deleted_at=iso(10), item=item)
        again = CleanupItem(**cleanup_item_data(second, iso(10), id=shared_id))
        await _raises(Conflict, store.trash.purge(second, deleted_at=iso(10), item=again))
        store = await self.reopen(store)
        assert await store.agents.get(second) is not None
        assert [e.seq for e in await store.timeline.read(second)] == [0, 1, 2]
        assert [i.agentId for i in await store.trash.queued()] == [first]

    @store_test
    async def test_failed_items_stay_queued_until_retired(self, store: Store) -> None:
        ids = []
        for n in range(3):
            agent_id = await self._tombstone(store, n, iso(10))
            data = cleanup_item_data(agent_id, iso(10), createdAt=iso(100 - n))
            await store.trash.purge(agent_id, deleted_at=iso(10), item=CleanupItem(**data))
            ids.append(data["id"])
        # Oldest purge first.
        assert [i.id for i in await store.trash.queued()] == ids[::-1]
        assert [i.id for i in await store.trash.queued(limit=2)] == [ids[2], ids[1]]
        failed = await store.trash.retry_later(ids[0], error="permission denied", at=iso(200))
        assert (failed.attempts, failed.lastError, failed.lastAttemptAt) == (
            1,
            "permission denied",
            iso(200),
        )
        await store.trash.retry_later(ids[0], error="still denied", at=iso(300))
        await _raises(NotFound, store.trash.retry_later("cln_none", error="x", at=iso(1)))
        assert await store.trash.retire(ids[1]) is True
        assert await store.trash.retire(ids[1]) is False
        store = await self.reopen(store)
        queued = {i.id: i for i in await store.trash.queued()}
        assert sorted(queued) == sorted([ids[0], ids[2]])
        assert (queued[ids[0]].attempts, queued[ids[0]].lastError) == (2, "still denied")

    @store_test
    async def test_last_sweep_is_remembered(self, store: Store) -> None:
        assert await store.trash.last_sweep() is None
        await store.trash.record_sweep(iso(5))
        await store.trash.record_sweep(iso(7))
        store = await self.reopen(store)
        assert await store.trash.last_sweep() == iso(7)
