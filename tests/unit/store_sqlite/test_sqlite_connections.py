"""Connection governance of the sqlite driver: PRAGMAs on every connection, one writer, a bounded
read-only pool, WAL, no blocking of the event loop, failed writes that change nothing."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import StorageError, Unavailable
from paseo_hookspecs.records import AgentRecord, TimelineEntry, WorkspaceRecord, dump_record
from paseo_store_sqlite import DATABASE_FILE, SqliteStore
from paseo_store_sqlite._database import BUSY_TIMEOUT_MS, READ_POOL_SIZE

from paseo.testing.store_conformance import agent_data, timeline_entry_data, workspace_data

PRAGMAS = ("journal_mode", "synchronous", "foreign_keys", "busy_timeout", "query_only")
FULL = 2  # PRAGMA synchronous value of FULL


def _pragmas(conn: sqlite3.Connection) -> dict[str, Any]:
    return {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in PRAGMAS}


async def _open_every_reader(store: SqliteStore) -> None:
    """Hold READ_POOL_SIZE reads open at once, so the pool has to open all its connections."""
    barrier = threading.Barrier(READ_POOL_SIZE, timeout=10)

    def wait(conn: sqlite3.Connection) -> int:
        barrier.wait()
        return int(conn.execute("SELECT COUNT(*) FROM agents").fetchone()[0])

    await asyncio.gather(*(store.database.read(wait) for _ in range(READ_POOL_SIZE)))


def test_writer_connection_pragmas(with_store) -> None:
    pragmas = with_store(lambda store: store.database.inspect_writer(_pragmas))
    assert pragmas == {
        "journal_mode": "wal",
        "synchronous": FULL,
        "foreign_keys": 1,
        "busy_timeout": BUSY_TIMEOUT_MS,
        "query_only": 0,
    }


def test_every_reader_connection_gets_the_same_pragmas_and_is_query_only(with_store) -> None:
    async def body(store: SqliteStore) -> list[dict[str, Any]]:
        await _open_every_reader(store)
        assert store.database.reader_count == READ_POOL_SIZE
        return await store.database.inspect_readers(_pragmas)

    readers = with_store(body)
    assert len(readers) == READ_POOL_SIZE
    for pragmas in readers:
        assert pragmas == {
            "journal_mode": "wal",
            "synchronous": FULL,
            "foreign_keys": 1,
            "busy_timeout": BUSY_TIMEOUT_MS,
            "query_only": 1,
        }


def test_reader_pool_is_bounded(with_store) -> None:
    async def body(store: SqliteStore) -> int:
        await store.agents.insert(AgentRecord.model_validate(agent_data()))
        await asyncio.gather(*(store.agents.list() for _ in range(50)))
        return store.database.reader_count

    assert 1 <= with_store(body) <= READ_POOL_SIZE


def test_reader_connections_are_opened_read_only(with_store) -> None:
    def try_write(conn: sqlite3.Connection) -> str:
        # Even with query_only lifted, the connection itself was opened with mode=ro.
        conn.execute("PRAGMA query_only = 0")
        try:
            conn.execute("INSERT INTO push_tokens (token) VALUES ('sneaky')")
        except sqlite3.OperationalError as exc:
            return str(exc)
        finally:
            conn.execute("PRAGMA query_only = 1")
        return "written"

    async def body(store: SqliteStore) -> tuple[str, list[str]]:
        outcome = await store.database.read(try_write)
        return outcome, await store.push_tokens.list()

    outcome, tokens = with_store(body)
    assert "readonly" in outcome
    assert tokens == []


def test_database_is_one_private_file_in_wal_mode(home: Path, with_store) -> None:
    with_store(lambda store: store.push_tokens.add("tok"))
    path = home / DATABASE_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_records_are_stored_as_their_dump_record_json(home: Path, with_store) -> None:
    record = AgentRecord.model_validate(agent_data())
    with_store(lambda store: store.agents.insert(record))
    conn = sqlite3.connect(home / DATABASE_FILE)
    try:
        (text,) = conn.execute("SELECT record FROM agents").fetchone()
    finally:
        conn.close()
    assert json.loads(text) == dump_record(record)


def test_event_loop_keeps_running_during_a_big_write(with_store) -> None:
    agent_id = "00000000-0000-4000-8000-000000000001"
    entries = [
        TimelineEntry.model_validate(timeline_entry_data(agent_id, seq)) for seq in range(10_000)
    ]

    async def body(store: SqliteStore) -> tuple[int, int]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        before = ticks
        await store.timeline.append(entries)
        during = ticks - before
        stop.set()
        await task
        return during, len(await store.timeline.read(agent_id))

    during, stored = with_store(body)
    assert stored == len(entries)
    # Had the write run on the loop, the ticker could not have run until it finished.
    assert during > 10


def test_concurrent_reads_proceed_while_a_write_is_in_flight(with_store) -> None:
    async def body(store: SqliteStore) -> list[int]:
        release = threading.Event()

        def slow_write(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO push_tokens (token) VALUES ('late')")
            release.wait(timeout=10)

        await store.push_tokens.add("early")
        writing = asyncio.create_task(store.database.write(slow_write))
        # Readers see the last committed snapshot while the writer holds its transaction open.
        seen = [len(await store.push_tokens.list()) for _ in range(3)]
        release.set()
        await writing
        seen.append(len(await store.push_tokens.list()))
        return seen

    assert with_store(body) == [1, 1, 1, 2]


async def _fill_disk(store: SqliteStore) -> None:
    """Simulate a full disk: the database may not grow past its current size."""

    def cap(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")

    await store.database.inspect_writer(cap)


def test_disk_full_is_a_storage_error_and_changes_nothing(with_store) -> None:
    first = AgentRecord.model_validate(agent_data(title="small"))
    big = AgentRecord.model_validate(agent_data(title="x" * 200_000))

    async def body(store: SqliteStore) -> None:
        await store.agents.insert(first)
        await _fill_disk(store)
        with pytest.raises(StorageError, match="full"):
            await store.agents.insert(big)
        with pytest.raises(StorageError):
            await store.agents.update(first.id, {"title": "y" * 200_000})
        assert await store.agents.get(big.id) is None
        stored = await store.agents.get(first.id)
        assert stored is not None
        assert dump_record(stored) == dump_record(first)
        # The writer is usable again once there is room.
        await store.database.inspect_writer(
            lambda conn: conn.execute("PRAGMA max_page_count = 1073741823")
        )
        assert await store.agents.insert(big)

    with_store(body)


def test_a_failed_label_rename_rewrites_no_workspace(with_store) -> None:
    async def body(store: SqliteStore) -> None:
        await store.labels.create("backend", "sky")
        for index in range(200):
            record = WorkspaceRecord.model_validate(
                workspace_data(labels=["backend"], cwd=f"/src/w{index}")
            )
            await store.workspaces.insert(record)
        before = [dump_record(w) for w in (await store.workspaces.list(limit=1000)).items]
        await _fill_disk(store)
        with pytest.raises(StorageError):
            await store.labels.edit("backend", new_name="b" * 4000, now="2030-01-01T00:00:00Z")
        after = [dump_record(w) for w in (await store.workspaces.list(limit=1000)).items]
        assert after == before
        assert [label.name for label in await store.labels.list()] == ["backend"]

    with_store(body)


def test_closed_store_refuses_calls(home: Path, arun) -> None:
    async def body() -> None:
        store = SqliteStore(home)
        await store.open()
        await store.close()
        with pytest.raises(Unavailable):
            await store.agents.count()
        with pytest.raises(Unavailable):
            await store.push_tokens.add("tok")

    arun(body())


def test_close_waits_for_queued_writes(home: Path, arun) -> None:
    async def body() -> int:
        store = SqliteStore(home)
        await store.open()
        writes = [asyncio.ensure_future(store.push_tokens.add(f"t{i}")) for i in range(100)]
        await asyncio.sleep(0)
        await store.close()
        await asyncio.gather(*writes)
        reopened = SqliteStore(home)
        await reopened.open()
        try:
            return len(await reopened.push_tokens.list())
        finally:
            await reopened.close()

    assert arun(body()) == 100
