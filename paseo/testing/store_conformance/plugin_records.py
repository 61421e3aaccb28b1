"""The ``plugin_records`` repositories (optional: a driver without them skips these tests)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.plugin_records import (
    MAX_RECORD_BYTES,
    PluginRecordRepository,
    PluginRecordStore,
)
from paseo_hookspecs.store import MAX_PAGE_SIZE

from paseo.testing.store_conformance.base import StoreSuite, store_test


def _records(store: Store) -> PluginRecordStore:
    records: PluginRecordStore | None = getattr(store, "plugin_records", None)
    if records is None:
        pytest.skip("this store keeps no plugin records")
    return records


async def _ids(repo: PluginRecordRepository, limit: int) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        page = await repo.list(cursor=cursor, limit=limit)
        seen += [item.id for item in page.items]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


class PluginRecordTests(StoreSuite):
    """Put/get/list/delete of JSON objects by id, compare-and-set by revision, namespaces that
    never see each other, order of writes, and what a reopen finds."""

    @store_test
    async def test_plugin_records_round_trip_with_revisions(self, store: Store) -> None:
        repo = _records(store).collection("loops", "loops")
        assert await repo.get("a1") is None
        value: dict[str, Any] = {"name": "ünï", "n": 1, "nested": {"list": [1, None, "x"]}}
        first = await repo.put("a1", value)
        value["n"] = 99  # put encoded the value when called: this changes nothing stored
        assert (first.id, first.revision, first.value["n"]) == ("a1", 1, 1)
        assert first.updated.endswith("Z")
        got = await repo.get("a1")
        assert got is not None
        assert got.value == {**value, "n": 1}
        assert got.revision == 1
        got.value["n"] = 7  # a read hands out a copy
        second = await repo.put("a1", {"n": 2})
        assert second.revision == 2
        again = await repo.get("a1")
        assert again is not None
        assert again.value == {"n": 2}
        assert again.revision == 2
        assert await repo.delete("a1") is True
        assert await repo.delete("a1") is False
        assert await repo.get("a1") is None
        assert (await repo.put("a1", {})).revision == 1  # a new record starts again

    @store_test
    async def test_plugin_records_compare_and_set(self, store: Store) -> None:
        repo = _records(store).collection("p", "c")
        await repo.put("x", {"v": 1}, expect_revision=0)
        with pytest.raises(Conflict):
            await repo.put("x", {"v": 2}, expect_revision=0)
        with pytest.raises(Conflict):
            await repo.put("x", {"v": 2}, expect_revision=2)
        with pytest.raises(Conflict):
            await repo.put("missing", {"v": 2}, expect_revision=1)
        assert await repo.get("missing") is None
        record = await repo.get("x")
        assert record is not None
        assert record.value == {"v": 1}
        assert record.revision == 1
        assert (await repo.put("x", {"v": 3}, expect_revision=1)).revision == 2
        with pytest.raises(Conflict):
            await repo.delete("x", expect_revision=1)
        assert await repo.get("x") is not None
        assert await repo.delete("x", expect_revision=2) is True
        with pytest.raises(InvalidParams):
            await repo.put("x", {}, expect_revision=-1)

    @store_test
    async def test_plugin_records_refuse_what_is_no_record(self, store: Store) -> None:
        records = _records(store)
        repo = records.collection("p", "c")
        for bad_id in ("", ".hidden", "a/b", "../x", "a\\b", "x" * 129, "sp ace", "é"):
            with pytest.raises(InvalidParams):
                await repo.put(bad_id, {})
            with pytest.raises(InvalidParams):
                await repo.get(bad_id)
        for bad_value in ([1], "text", {"f": math.nan}, {"o": object()}):
            with pytest.raises(InvalidParams):
                await repo.put("ok", bad_value)  # type: ignore[arg-type]
        with pytest.raises(InvalidParams):
            await repo.put("ok", {"big": "x" * MAX_RECORD_BYTES})
        for bad_name in ("", "Upper", "a/b", "-lead", "x" * 65, ".."):
            with pytest.raises(InvalidParams):
                records.collection(bad_name, "c")
            with pytest.raises(InvalidParams):
                records.collection("p", bad_name)
        with pytest.raises(InvalidParams):
            await repo.list(cursor="not a cursor")
        assert await repo.get("ok") is None

    @store_test
    async def test_plugin_records_list_in_id_order_with_stable_pages(self, store: Store) -> None:
        repo = _records(store).collection("p", "c")
        assert (await repo.list()).items == []
        ids = [f"r{n:03d}" for n in range(25)]
        for record_id in reversed(ids):
            await repo.put(record_id, {"id": record_id})
        assert await _ids(repo, 7) == ids
        page = await repo.list(limit=10)
        assert [i.id for i in page.items] == ids[:10]
        assert page.next_cursor is not None
        await repo.delete(ids[10])  # the next row after the cursor goes, one before it comes
        await repo.put("r0005a", {})
        rest = await repo.list(cursor=page.next_cursor, limit=100)
        assert [i.id for i in rest.items] == ids[11:]
        assert rest.next_cursor is None
        assert [i.value for i in rest.items][:1] == [{"id": "r011"}]
        big = await repo.list(limit=MAX_PAGE_SIZE * 10)
        assert len(big.items) == 25

    @store_test
    async def test_plugin_record_namespaces_never_meet(self, store: Store) -> None:
        records = _records(store)
        mine, theirs = records.collection("mine", "c"), records.collection("theirs", "c")
        other = records.collection("mine", "other")
        await mine.put("same", {"who": "mine"})
        await theirs.put("same", {"who": "theirs"})
        assert await other.get("same") is None
        assert [i.id for i in (await other.list()).items] == []
        assert await theirs.delete("same") is True
        kept = await mine.get("same")
        assert kept is not None
        assert kept.value == {"who": "mine"}
        await other.put("o", {})
        assert await records.collections() == [("mine", "c"), ("mine", "other")]

    @store_test
    async def test_plugin_records_survive_a_reopen(self, store: Store) -> None:
        repo = _records(store).collection("loops", "loops")
        await repo.put("kept", {"status": "running", "text": "a\nb \u2603"})
        await repo.put("kept", {"status": "running", "iterations": [{"index": 1}]})
        await repo.put("gone", {})
        await repo.delete("gone")
        reopened = await self.reopen(store)
        again = _records(reopened).collection("loops", "loops")
        record = await again.get("kept")
        assert record is not None
        assert record.revision == 2
        assert record.value == {"status": "running", "iterations": [{"index": 1}]}
        assert await again.get("gone") is None
        assert [i.id for i in (await again.list()).items] == ["kept"]
        with pytest.raises(Conflict):
            await again.put("kept", {}, expect_revision=1)

    @store_test
    async def test_plugin_record_writes_land_in_call_order(self, store: Store) -> None:
        repo = _records(store).collection("p", "c")
        await asyncio.gather(*(repo.put("x", {"n": n}) for n in range(30)))
        record = await repo.get("x")
        assert record is not None
        assert record.value == {"n": 29}
        assert record.revision == 30
        # A caller cancelled while its write is under way never lets a later write be undone.
        first = asyncio.ensure_future(repo.put("y", {"n": 1}))
        await asyncio.sleep(0)
        first.cancel()
        await repo.put("y", {"n": 2})
        latest = await repo.get("y")
        assert latest is not None
        assert latest.value == {"n": 2}

    @store_test
    async def test_concurrent_compare_and_set_writers_lose_nothing(self, store: Store) -> None:
        repo = _records(store).collection("p", "counter")
        await repo.put("c", {"n": 0})
        writers = min(self.concurrency, 30)

        async def bump() -> None:
            while True:
                current = await repo.get("c")
                assert current is not None
                try:
                    await repo.put(
                        "c", {"n": current.value["n"] + 1}, expect_revision=current.revision
                    )
                    return
                except Conflict:
                    await asyncio.sleep(0)

        await asyncio.gather(*(bump() for _ in range(writers)))
        final = await repo.get("c")
        assert final is not None
        assert final.value == {"n": writers}
        assert final.revision == writers + 1
