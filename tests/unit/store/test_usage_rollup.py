"""Roll-ups of old usage records on disk: the JSON day files and the SQLite rows they become,
and a roll-up interrupted by a crash (neither a turn lost nor counted twice)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from paseo_hookspecs.usage import UsageRecord
from paseo_store_json import JsonStore
from paseo_store_sqlite.store import SqliteStore

from paseo.testing.store_conformance import usage_data


def _old(n: int) -> UsageRecord:
    return UsageRecord.model_validate(
        usage_data(n, id=f"old-{n}", at=f"2020-01-0{1 + n % 2}T08:00:00.000Z")
    )


async def _totals(store: JsonStore | SqliteStore) -> dict[str | None, tuple[int, float | None]]:
    assert store.usage is not None
    return {t.key: (t.turns, t.costUsd) for t in await store.usage.query(group_by="day")}


def test_json_old_day_files_become_rollups(tmp_path: Path) -> None:
    async def main() -> None:
        store = JsonStore(tmp_path)
        await store.open()
        for n in range(1, 7):
            await store.usage.add(_old(n))
        before = await _totals(store)
        await store.close()
        assert sorted(p.name for p in (tmp_path / "usage").iterdir()) == [
            "2020-01-01.jsonl",
            "2020-01-02.jsonl",
        ]
        store = JsonStore(tmp_path)
        await store.open()
        assert await _totals(store) == before
        await store.close()
        assert [p.name for p in (tmp_path / "usage").iterdir()] == ["rollups.json"]
        rollups = json.loads((tmp_path / "usage" / "rollups.json").read_text())
        assert rollups["generation"] == 1
        assert sum(r["turns"] for r in rollups["records"]) == 6

    asyncio.run(main())


def test_json_rollup_interrupted_before_its_commit_point_loses_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        store = JsonStore(tmp_path)
        await store.open()
        for n in range(1, 5):
            await store.usage.add(_old(n))
        before = await _totals(store)
        await store.close()
        # A roll-up that renamed its day file aside and died before writing the roll-ups.
        usage = tmp_path / "usage"
        (usage / "2020-01-01.jsonl").rename(usage / "2020-01-01.rolling-1")
        store = JsonStore(tmp_path)
        await store.open()
        assert await _totals(store) == before
        await store.close()
        # One that wrote the roll-ups and died before removing the file set aside.
        (usage / "2020-01-01.rolling-1").write_text(
            json.dumps(_old(1).model_dump(mode="json", exclude_none=True)) + "\n"
        )
        store = JsonStore(tmp_path)
        await store.open()
        assert await _totals(store) == before
        await store.close()

    asyncio.run(main())


def test_json_torn_usage_line_is_skipped_and_cut(tmp_path: Path) -> None:
    async def main() -> None:
        store = JsonStore(tmp_path)
        await store.open()
        record = UsageRecord.model_validate(usage_data(1, at="2999-01-01T00:00:00.000Z"))
        await store.usage.add(record)
        await store.close()
        day = tmp_path / "usage" / "2999-01-01.jsonl"
        with day.open("ab") as f:
            f.write(b'{"id": "torn"')
        store = JsonStore(tmp_path)
        await store.open()
        second = UsageRecord.model_validate(usage_data(2, at="2999-01-01T01:00:00.000Z"))
        assert await store.usage.add(second) is True
        assert await _totals(store) == {"2999-01-01": (2, 0.75)}
        await store.close()
        assert len(day.read_text().splitlines()) == 2

    asyncio.run(main())


def test_sqlite_old_rows_become_rollups(tmp_path: Path) -> None:
    async def main() -> None:
        store = SqliteStore(tmp_path)
        await store.open()
        for n in range(1, 7):
            await store.usage.add(_old(n))
        before = await _totals(store)
        await store.close()
        store = SqliteStore(tmp_path)
        await store.open()
        assert await _totals(store) == before
        await store.close()
        conn = sqlite3.connect(tmp_path / "paseo.db")
        try:
            (rows,) = conn.execute("SELECT count(*) FROM usage").fetchone()
        finally:
            conn.close()
        assert rows == 2  # one a day: n % 2 picks both the day and the agent

    asyncio.run(main())
