"""Plugins' records (:mod:`paseo_hookspecs.plugin_records`): the ``plugin_records`` table.

One row per record, keyed ``(namespace, collection, id)``; a put or delete is one
transaction on the writer thread (which runs writes in call order, and goes on with a write
whose caller was cancelled), compare-and-set included.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from paseo_hookspecs.errors import Conflict, StorageError
from paseo_hookspecs.plugin_records import (
    PluginRecord,
    PluginRecordRepository,
    PluginRecordStore,
    check_expect,
    check_id,
    check_name,
    clamp_limit,
    decode_cursor,
    decode_value,
    encode_cursor,
    encode_value,
)
from paseo_hookspecs.store import DEFAULT_PAGE_SIZE, Page

from paseo_store_sqlite._database import Database


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _record(row: tuple[Any, ...]) -> PluginRecord:
    record_id, revision, updated, text = row
    try:
        value = decode_value(text)
    except ValueError as exc:
        raise StorageError(f"the stored plugin record {record_id!r} is damaged: {exc}") from exc
    return PluginRecord(record_id, value, int(revision), updated)


class SqlitePluginRecordRepository(PluginRecordRepository):
    def __init__(self, db: Database, namespace: str, collection: str) -> None:
        self._db = db
        self.namespace = namespace
        self.collection = collection

    async def get(self, record_id: str) -> PluginRecord | None:
        check_id(record_id)
        scope = (self.namespace, self.collection, record_id)

        def run(conn: sqlite3.Connection) -> PluginRecord | None:
            row = conn.execute(
                "SELECT id, revision, updated, json FROM plugin_records"
                " WHERE namespace = ? AND collection = ? AND id = ?",
                scope,
            ).fetchone()
            return None if row is None else _record(row)

        return await self._db.read(run)

    async def list(
        self, *, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> Page[PluginRecord]:
        after = decode_cursor(cursor)
        limit = clamp_limit(limit)
        scope = (self.namespace, self.collection)

        def run(conn: sqlite3.Connection) -> list[PluginRecord]:
            # "" sorts before every id: no cursor starts at the first row
            rows = conn.execute(
                "SELECT id, revision, updated, json FROM plugin_records"
                " WHERE namespace = ? AND collection = ? AND id > ? ORDER BY id LIMIT ?",
                (*scope, after or "", limit + 1),
            ).fetchall()
            return [_record(row) for row in rows]

        items = await self._db.read(run)
        if len(items) <= limit:
            return Page(items)
        items = items[:limit]
        return Page(items, encode_cursor(items[-1].id))

    async def put(
        self, record_id: str, value: Mapping[str, Any], *, expect_revision: int | None = None
    ) -> PluginRecord:
        check_id(record_id)
        check_expect(expect_revision)
        text = encode_value(value)  # now: the caller may change its dict once we return
        scope = (self.namespace, self.collection, record_id)

        def run(conn: sqlite3.Connection) -> PluginRecord:
            current = self._revision(conn, scope, expect_revision)
            updated = _now()
            conn.execute(
                "INSERT INTO plugin_records (namespace, collection, id, revision, updated, json)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, collection, id) DO UPDATE"
                " SET revision = excluded.revision, updated = excluded.updated,"
                " json = excluded.json",
                (*scope, current + 1, updated, text),
            )
            return PluginRecord(record_id, decode_value(text), current + 1, updated)

        return await self._db.write(run)

    async def delete(self, record_id: str, *, expect_revision: int | None = None) -> bool:
        check_id(record_id)
        check_expect(expect_revision)
        scope = (self.namespace, self.collection, record_id)

        def run(conn: sqlite3.Connection) -> bool:
            self._revision(conn, scope, expect_revision)
            deleted = conn.execute(
                "DELETE FROM plugin_records WHERE namespace = ? AND collection = ? AND id = ?",
                scope,
            )
            return bool(deleted.rowcount)

        return await self._db.write(run)

    def _revision(
        self, conn: sqlite3.Connection, scope: tuple[str, str, str], expect: int | None
    ) -> int:
        """The stored revision (0: none), checked against ``expect`` inside the write."""
        row = conn.execute(
            "SELECT revision FROM plugin_records WHERE namespace = ? AND collection = ? AND id = ?",
            scope,
        ).fetchone()
        current = 0 if row is None else int(row[0])
        if expect is not None and expect != current:
            raise Conflict(f"{'/'.join(scope)} is at revision {current}, not {expect}")
        return current


class SqlitePluginRecordStore(PluginRecordStore):
    def __init__(self, db: Database) -> None:
        self._db = db

    def collection(self, namespace: str, collection: str) -> SqlitePluginRecordRepository:
        return SqlitePluginRecordRepository(
            self._db, check_name("namespace", namespace), check_name("collection", collection)
        )

    async def collections(self) -> list[tuple[str, str]]:
        def run(conn: sqlite3.Connection) -> list[tuple[str, str]]:
            rows = conn.execute(
                "SELECT DISTINCT namespace, collection FROM plugin_records"
                " ORDER BY namespace, collection"
            ).fetchall()
            return [(str(n), str(c)) for n, c in rows]

        return await self._db.read(run)
