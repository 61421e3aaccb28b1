"""The ``schedules`` repository."""

from __future__ import annotations

import functools

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    ScheduleRecord,
    dump_record,
    new_schedule_id,
)

from paseo.testing.store_conformance.base import StoreSuite, _raises, store_test
from paseo.testing.store_conformance.reading import collect_pages
from paseo.testing.store_conformance.records import (
    _rng,
    _schedules_page,
    iso,
    schedule_data,
)


class ScheduleTests(StoreSuite):
    """The ``schedules`` repository."""

    @store_test
    async def test_schedule_round_trips_every_field(self, store: Store) -> None:
        full = schedule_data()
        minimal = schedule_data(
            cadence={"type": "every", "everyMs": 60_000},
            target={"type": "agent", "agentId": "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"},
            name=None,
            nextRunAt=None,
            lastRunAt=None,
            expiresAt=None,
            maxRuns=None,
            runs=[],
            created_at=iso(5),
            without=["createdBy"],
        )
        for data in (full, minimal):
            assert await store.schedules.insert(ScheduleRecord.model_validate(data))
        for _ in range(2):
            for data in (full, minimal):
                got = await store.schedules.get(data["id"])
                assert got is not None
                assert dump_record(got) == data
            listed = (await store.schedules.list()).items
            assert [dump_record(s) for s in listed] == [full, minimal]
            store = await self.reopen(store)

    @store_test
    async def test_schedule_insert_get_delete(self, store: Store) -> None:
        data = schedule_data(name="first")
        assert await store.schedules.get(data["id"]) is None
        assert await store.schedules.insert(ScheduleRecord.model_validate(data)) is True
        other = schedule_data(data["id"], name="second")
        assert await store.schedules.insert(ScheduleRecord.model_validate(other)) is False
        got = await store.schedules.get(data["id"])
        assert got is not None
        assert got.name == "first"
        assert await store.schedules.delete(data["id"]) is True
        assert await store.schedules.delete(data["id"]) is False
        assert await store.schedules.get(data["id"]) is None
        store = await self.reopen(store)
        assert await store.schedules.get(data["id"]) is None

    @store_test
    async def test_schedule_list_filter_order_and_pagination(self, store: Store) -> None:
        statuses = ["active", "paused", "completed"]
        records = [schedule_data(created_at=iso(i // 2), status=statuses[i % 3]) for i in range(15)]
        for record in _rng(3).sample(records, len(records)):
            await store.schedules.insert(ScheduleRecord.model_validate(record))
        ordered = sorted(records, key=lambda r: (r["createdAt"], r["id"]))
        listed = await collect_pages(lambda c: store.schedules.list(cursor=c, limit=4))
        assert [s.id for s in listed] == [r["id"] for r in ordered]
        for status in statuses:
            listed = await collect_pages(functools.partial(_schedules_page, store, status, limit=2))
            assert [s.id for s in listed] == [r["id"] for r in ordered if r["status"] == status]
        await _raises(InvalidParams, store.schedules.list(cursor="\u2603 garbage"))

    @store_test
    async def test_schedule_update_compare_and_set(self, store: Store) -> None:
        data = schedule_data()
        await store.schedules.insert(ScheduleRecord.model_validate(data))
        stored = await store.schedules.update(
            data["id"],
            {"status": "paused", "pausedAt": iso(99), "updatedAt": iso(99)},
            expect={"status": "active", "pausedAt": None},
        )
        assert (stored.status, stored.pausedAt) == ("paused", iso(99))
        before = dump_record(stored)
        await _raises(
            Conflict,
            store.schedules.update(data["id"], {"status": "active"}, expect={"status": "active"}),
        )
        await _raises(
            InvalidParams, store.schedules.update(data["id"], {"name": "x", "status": "bogus"})
        )
        await _raises(
            InvalidParams, store.schedules.update(data["id"], {"name": "x", "maxRuns": 0})
        )
        await _raises(NotFound, store.schedules.update(new_schedule_id(), {"name": "x"}))
        store = await self.reopen(store)
        got = await store.schedules.get(data["id"])
        assert got is not None
        assert dump_record(got) == before

    @store_test
    async def test_schedule_upsert_run(self, store: Store) -> None:
        data = schedule_data(runs=[])
        schedule_id = data["id"]
        await store.schedules.insert(ScheduleRecord.model_validate(data))
        run = {
            "id": "run-a",
            "scheduledFor": iso(10),
            "startedAt": iso(11),
            "endedAt": None,
            "status": "running",
            "agentId": None,
            "output": None,
            "error": None,
            "attempt": 1,
        }
        stored = await store.schedules.upsert_run(
            schedule_id, run, {"lastRunAt": iso(11), "nextRunAt": iso(70)}
        )
        assert [dump_record(r) for r in stored.runs] == [run]
        assert (stored.lastRunAt, stored.nextRunAt) == (iso(11), iso(70))
        second = dict(run, id="run-b", scheduledFor=iso(70), startedAt=iso(71))
        await store.schedules.upsert_run(schedule_id, second)
        # Same id: the run is replaced in place, and the changes land with it.
        finished = dict(run, endedAt=iso(40), status="succeeded", output="done")
        stored = await store.schedules.upsert_run(
            schedule_id, finished, {"status": "completed", "nextRunAt": None}
        )
        assert [dump_record(r) for r in stored.runs] == [finished, second]
        assert stored.status == "completed"
        assert stored.nextRunAt is None
        before = dump_record(stored)
        await _raises(NotFound, store.schedules.upsert_run(new_schedule_id(), run))
        await _raises(
            InvalidParams, store.schedules.upsert_run(schedule_id, dict(run, status="weird"))
        )
        await _raises(
            InvalidParams,
            store.schedules.upsert_run(
                schedule_id, dict(run, id="run-c"), {"status": "not-a-status"}
            ),
        )
        store = await self.reopen(store)
        got = await store.schedules.get(schedule_id)
        assert got is not None
        assert dump_record(got) == before
