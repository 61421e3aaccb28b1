"""Schedules, ordered by ``(createdAt, id)``."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.records import ScheduleRecord
from paseo_hookspecs.store import DEFAULT_PAGE_SIZE, Changes, Expect, Page, ScheduleRepository

from paseo_store_sqlite._codec import (
    apply_changes,
    check_expect,
    check_limit,
    checked_text,
    decode_cursor,
    record_text,
)
from paseo_store_sqlite._database import Database
from paseo_store_sqlite._rows import load_current, page_of, parse, read_one

_SELECT_ONE = "SELECT record FROM schedules WHERE id = ?"


def _store_updated(conn: sqlite3.Connection, record: ScheduleRecord) -> None:
    conn.execute(
        "UPDATE schedules SET status = ?, created_at = ?, record = ? WHERE id = ?",
        (record.status, record.createdAt, record_text(record), record.id),
    )


class SqliteScheduleRepository(ScheduleRepository):
    """Schedule records with their run history inside the record."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, schedule_id: str) -> ScheduleRecord | None:
        return await read_one(
            self._db, _SELECT_ONE, schedule_id, functools.partial(parse, ScheduleRecord)
        )

    async def list(
        self,
        *,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[ScheduleRecord]:
        limit = check_limit(limit)
        clauses: list[str] = []
        params: list[Any] = []
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if cursor is not None:
            created_at, last_id = decode_cursor("schedules", cursor, (str, str))
            clauses.append("(created_at, id) > (?, ?)")
            params.extend((created_at, last_id))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT record FROM schedules {where} ORDER BY created_at, id LIMIT ?"  # noqa: S608
        params.append(limit + 1)

        def run(conn: sqlite3.Connection) -> list[ScheduleRecord]:
            return [parse(ScheduleRecord, row[0]) for row in conn.execute(sql, params).fetchall()]

        items = await self._db.read(run)
        return page_of(items, limit, "schedules", lambda r: (r.createdAt, r.id))

    async def insert(self, record: ScheduleRecord) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute(
                    "INSERT INTO schedules (id, status, created_at, record) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (id) DO NOTHING",
                    (
                        record.id,
                        record.status,
                        record.createdAt,
                        checked_text(ScheduleRecord, record),
                    ),
                ).rowcount
            )

        return await self._db.write(run)

    async def update(
        self, schedule_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> ScheduleRecord:
        def run(conn: sqlite3.Connection) -> ScheduleRecord:
            current = load_current(conn, _SELECT_ONE, schedule_id, "schedule")
            check_expect(current, expect)
            updated = apply_changes(ScheduleRecord, current, changes, key_field="id")
            _store_updated(conn, updated)
            return updated

        return await self._db.write(run)

    async def upsert_run(
        self, schedule_id: str, run: Mapping[str, Any], changes: Changes | None = None
    ) -> ScheduleRecord:
        new_run = dict(run)

        def transact(conn: sqlite3.Connection) -> ScheduleRecord:
            current = load_current(conn, _SELECT_ONE, schedule_id, "schedule")
            runs = list(current.get("runs") or [])
            for index, existing in enumerate(runs):
                if isinstance(existing, dict) and existing.get("id") == new_run.get("id"):
                    runs[index] = new_run
                    break
            else:
                runs.append(new_run)
            updated = apply_changes(
                ScheduleRecord, {**current, "runs": runs}, changes or {}, key_field="id"
            )
            _store_updated(conn, updated)
            return updated

        return await self._db.write(transact)

    async def delete(self, schedule_id: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(conn.execute("DELETE FROM schedules WHERE id = ?", (schedule_id,)).rowcount)

        return await self._db.write(run)
