"""A long timeline in the SQLite driver: pages read through the (agent_id, seq) index with a
LIMIT (never every row of the agent), rows of a typical size stored on shared pages (not an
overflow page each), and timelines written before migration ``0007_timeline_rows`` kept whole."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.sqlite_plan import query_plan
from paseo_hookspecs.records import TimelineEntry
from paseo_store_sqlite import DATABASE_FILE, SqliteStore
from paseo_store_sqlite._database import Database
from paseo_store_sqlite._migrations import MIGRATIONS

from paseo.testing.store_conformance import timeline_entry_data

AGENT = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"


def _entry(seq: int, text_bytes: int = 0) -> TimelineEntry:
    data = timeline_entry_data(AGENT, seq)
    data["event"]["item"]["text"] += "x" * text_bytes
    return TimelineEntry.model_validate(data)


def test_pages_by_seq_and_the_last_entry_read_the_index(
    home: Path, with_store: Callable[[Any], Any]
) -> None:
    with_store(lambda store: store.timeline.append([_entry(1)]))
    for sql, params in [
        ("SELECT entry FROM timeline WHERE agent_id = ? ORDER BY seq DESC LIMIT 1", (AGENT,)),
        (
            "SELECT entry FROM timeline WHERE agent_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?",
            (AGENT, 5, 200),
        ),
        (
            "SELECT entry FROM timeline WHERE agent_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
            (AGENT, 5, 200),
        ),
        ("SELECT MAX(seq) FROM timeline WHERE agent_id = ?", (AGENT,)),
    ]:
        plan = query_plan(home, sql, params)
        assert "INDEX timeline_by_seq" in plan, plan
        assert "TEMP B-TREE" not in plan, plan  # in seq order from the index, not sorted


def test_a_kilobyte_entry_takes_about_a_kilobyte_of_file(
    home: Path, with_store: Callable[[Any], Any]
) -> None:
    """In the old WITHOUT ROWID table each such row spilled into an overflow page of its own
    (over 4 KB of file per entry)."""
    entries = [_entry(seq, 1100) for seq in range(1, 2001)]

    async def fill(store: SqliteStore) -> None:
        for start in range(0, len(entries), 500):
            await store.timeline.append(entries[start : start + 500])

    with_store(fill)
    conn = sqlite3.connect(home / DATABASE_FILE)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, page_size = (
            conn.execute("PRAGMA page_count").fetchone()[0],
            conn.execute("PRAGMA page_size").fetchone()[0],
        )
    finally:
        conn.close()
    line = len(entries[0].model_dump_json())
    assert pages * page_size < len(entries) * line * 1.6, (pages * page_size, line)


def test_timelines_written_before_the_migration_are_kept(home: Path, arun: Any) -> None:
    path = home / DATABASE_FILE
    before = [m.id for m in MIGRATIONS].index("0007_timeline_rows")

    async def seed() -> None:
        db = Database(path, migrations=MIGRATIONS[:before])
        await db.open()

        def insert(conn: sqlite3.Connection) -> None:
            for seq in (1, 2, 3):
                entry = _entry(seq)
                conn.execute(
                    "INSERT INTO timeline (agent_id, seq, epoch, timestamp, entry) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (AGENT, seq, entry.epoch, entry.timestamp, entry.model_dump_json()),
                )

        await db.write(insert)
        await db.close()

    async def after() -> tuple[list[int], list[int]]:
        store = SqliteStore(home)
        await store.open()
        try:
            await store.timeline.append([_entry(4)])
            whole = [e.seq for e in await store.timeline.read(AGENT)]
            tail = [e.seq for e in await store.timeline.read(AGENT, limit=2, tail=True)]
            return whole, tail
        finally:
            await store.close()

    arun(seed())
    assert arun(after()) == ([1, 2, 3, 4], [3, 4])
