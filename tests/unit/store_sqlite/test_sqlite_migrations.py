"""Forward-only migrations: recorded once, immutable, one transaction each, newer ones refused."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from paseo_hookspecs.errors import StorageError
from paseo_hookspecs.store import AgentFilter
from paseo_store_sqlite import DATABASE_FILE, SqliteStore
from paseo_store_sqlite._database import Database
from paseo_store_sqlite._migrations import MIGRATIONS, Migration, split_statements

from paseo.testing.store_conformance import agent_data

# The SQL of every migration that any database may have recorded. Editing an applied migration
# would leave existing databases on the old schema with nothing to bring them forward: add a new
# migration instead, and pin its digest here.
PINNED_SHA256 = {
    "0001_initial_schema": "e1732124735efeff3eac450225473d652d8e8e0f4c3b799755c05398eee4996b",
    "0002_agent_lookups": "e47a8b258d3c80ea347c0f58d510b95878afaa9549ff11d0732a3fe51c108b11",
    "0003_trash": "8343b67971ae239cb4a379550ad7c2d1c416d7d1a4ea360b04e08282222f29ff",
    "0004_usage": "0d15b5dd491b677fb6eaa6f9bcfe74dc5f24999ecd94c77e09810f9251268579",
    "0005_agent_counts": "a5ef9d11a069c8149ffdd2a55b2ffd477fd6fd37ff56910f3ad85e8c454de2b3",
    "0006_plugin_records": "7af23ac7e2fc783d15805a7df6cbcdf0d709f8afe7aaa0d2f8097c8e9fa977a4",
    "0007_timeline_rows": "7f408b3dbfcb4acfb4a3c803ed8f40efe84660ccd82385041c512923997387dd",
}


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_applied_migrations_are_never_edited() -> None:
    digests = {m.id: hashlib.sha256(m.sql.encode()).hexdigest() for m in MIGRATIONS}
    assert digests == PINNED_SHA256


def test_migration_ids_are_unique_and_ordered() -> None:
    ids = [m.id for m in MIGRATIONS]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


def test_fresh_database_records_every_migration(home: Path, with_store) -> None:
    with_store(lambda store: store.agents.count())
    rows = _rows(home / DATABASE_FILE, "SELECT id, applied_at FROM schema_migrations")
    assert [row[0] for row in rows] == [m.id for m in MIGRATIONS]
    assert all(isinstance(row[1], str) and row[1] for row in rows)


def test_reopening_applies_nothing_again(home: Path, with_store) -> None:
    with_store(lambda store: store.push_tokens.add("tok"))
    before = _rows(home / DATABASE_FILE, "SELECT id, applied_at FROM schema_migrations")
    assert with_store(lambda store: store.push_tokens.list()) == ["tok"]
    assert _rows(home / DATABASE_FILE, "SELECT id, applied_at FROM schema_migrations") == before


def test_database_recording_an_unknown_migration_is_refused(home: Path, with_store, arun) -> None:
    with_store(lambda store: store.push_tokens.add("tok"))
    conn = sqlite3.connect(home / DATABASE_FILE)
    with conn:
        conn.execute(
            "INSERT INTO schema_migrations (id, applied_at) VALUES ('9999_from_the_future', 'x')"
        )
    conn.close()

    store = SqliteStore(home)
    with pytest.raises(StorageError, match="9999_from_the_future") as caught:
        arun(store.open())
    assert "newer Paseo" in caught.value.message
    assert caught.value.data == {"unknownMigrations": ["9999_from_the_future"]}
    # Refused before touching anything: the data is still there, and the store is not open.
    assert _rows(home / DATABASE_FILE, "SELECT token FROM push_tokens") == [("tok",)]
    arun(store.close())


def test_a_failing_migration_leaves_no_trace(home: Path, arun) -> None:
    path = home / DATABASE_FILE
    broken = (
        *MIGRATIONS,
        Migration("0099_broken", "CREATE TABLE extra (x); CREATE TABLE extra (x)"),
    )
    with pytest.raises(StorageError):
        arun(Database(path, migrations=broken).open())
    assert _rows(path, "SELECT name FROM sqlite_master WHERE name = 'extra'") == []
    assert [r[0] for r in _rows(path, "SELECT id FROM schema_migrations")] == [
        m.id for m in MIGRATIONS
    ]


def test_a_new_migration_applies_on_an_existing_database(home: Path, with_store, arun) -> None:
    with_store(lambda store: store.push_tokens.add("tok"))
    path = home / DATABASE_FILE
    newer = (
        *MIGRATIONS,
        Migration("0099_extra", "CREATE TABLE extra (x TEXT); CREATE INDEX extra_x ON extra (x);"),
    )

    async def open_and_close() -> None:
        db = Database(path, migrations=newer)
        await db.open()
        await db.close()

    arun(open_and_close())
    assert [r[0] for r in _rows(path, "SELECT id FROM schema_migrations")][-1] == "0099_extra"
    assert _rows(path, "SELECT token FROM push_tokens") == [("tok",)]
    # An older Paseo (without 0099) now refuses this database.
    with pytest.raises(StorageError, match="0099_extra"):
        arun(SqliteStore(path.parent).open())


def test_split_statements_keeps_semicolons_inside_literals() -> None:
    sql = "CREATE TABLE t (x TEXT DEFAULT 'a;b'); INSERT INTO t VALUES ('c;d');\n"
    assert split_statements(sql) == [
        "CREATE TABLE t (x TEXT DEFAULT 'a;b');",
        "INSERT INTO t VALUES ('c;d');",
    ]


@pytest.mark.parametrize("applied", [1, 2], ids=["from-0001", "from-0002"])
def test_the_trash_migration_copies_existing_tombstones(home: Path, arun, applied: int) -> None:
    """A database written before ``0003_trash`` (with only the initial schema, or also the
    agent lookups) whose records carry ``deletedAt`` (a newer writer's field, kept verbatim)
    gets every later migration and the ``deleted_at`` column filled from them."""
    path = home / DATABASE_FILE
    tomb = agent_data(deletedAt="2026-01-02T00:00:00.000Z")
    live = agent_data(created_at="2026-01-01T00:00:01.000Z")

    async def seed() -> None:
        db = Database(path, migrations=MIGRATIONS[:applied])
        await db.open()

        def insert(conn: sqlite3.Connection) -> None:
            for data in (tomb, live):
                conn.execute(
                    "INSERT INTO agents (id, workspace_id, provider, last_status, archived_at, "
                    "requires_attention, created_at, record) VALUES (?, ?, ?, ?, NULL, 0, ?, ?)",
                    (
                        data["id"],
                        data["workspaceId"],
                        data["provider"],
                        data["lastStatus"],
                        data["createdAt"],
                        json.dumps(data),
                    ),
                )

        await db.write(insert)
        await db.close()

    async def listed() -> tuple[list[str], list[str]]:
        store = SqliteStore(home)
        await store.open()
        try:
            alive = [a.id for a in (await store.agents.list(AgentFilter())).items]
            gone = [a.id for a in (await store.agents.list(AgentFilter(trashed=True))).items]
            return alive, gone
        finally:
            await store.close()

    arun(seed())
    assert arun(listed()) == ([live["id"]], [tomb["id"]])
    assert [r[0] for r in _rows(path, "SELECT id FROM schema_migrations")] == [
        m.id for m in MIGRATIONS
    ]
