"""The trash: a purge deletes a tombstoned agent and queues its cleanup item in one
transaction; the queue is ``cleanup_queue``, the last automatic sweep a ``maintenance`` row."""

from __future__ import annotations

import sqlite3

from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.records import CleanupItem
from paseo_hookspecs.store import DEFAULT_PAGE_SIZE, TrashRepository

from paseo_store_sqlite._codec import apply_changes, check_limit, checked_text, record_text
from paseo_store_sqlite._database import Database
from paseo_store_sqlite._rows import load_current, parse

_LAST_SWEEP = "trash.lastSweepAt"


class SqliteTrashRepository(TrashRepository):
    """The cleanup queue ordered by ``(created_at, id)``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def purge(self, agent_id: str, *, deleted_at: str, item: CleanupItem) -> bool:
        text = checked_text(CleanupItem, item)
        if item.agentId != agent_id or item.deletedAt != deleted_at:
            raise InvalidParams("the cleanup item must name the purged agent and its deletedAt")

        def run(conn: sqlite3.Connection) -> bool:
            removed = conn.execute(
                "DELETE FROM agents WHERE id = ? AND deleted_at = ?", (agent_id, deleted_at)
            ).rowcount
            if not removed:
                return False
            # Labels go with the row (ON DELETE CASCADE); the timeline is keyed by id only.
            conn.execute("DELETE FROM timeline WHERE agent_id = ?", (agent_id,))
            inserted = conn.execute(
                "INSERT INTO cleanup_queue (id, created_at, record) VALUES (?, ?, ?) "
                "ON CONFLICT (id) DO NOTHING",
                (item.id, item.createdAt, text),
            ).rowcount
            if not inserted:
                # Raising rolls the whole transaction back: the agent stays a tombstone.
                raise Conflict(f"cleanup item {item.id} is queued already")
            return True

        return await self._db.write(run)

    async def queued(self, *, limit: int = DEFAULT_PAGE_SIZE) -> list[CleanupItem]:
        size = check_limit(limit)

        def run(conn: sqlite3.Connection) -> list[CleanupItem]:
            rows = conn.execute(
                "SELECT record FROM cleanup_queue ORDER BY created_at, id LIMIT ?", (size,)
            ).fetchall()
            return [parse(CleanupItem, row[0]) for row in rows]

        return await self._db.read(run)

    async def retire(self, item_id: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute("DELETE FROM cleanup_queue WHERE id = ?", (item_id,)).rowcount
            )

        return await self._db.write(run)

    async def retry_later(self, item_id: str, *, error: str, at: str) -> CleanupItem:
        def run(conn: sqlite3.Connection) -> CleanupItem:
            current = load_current(
                conn, "SELECT record FROM cleanup_queue WHERE id = ?", item_id, "cleanup item"
            )
            changes = {
                "attempts": int(current.get("attempts") or 0) + 1,
                "lastError": error,
                "lastAttemptAt": at,
            }
            updated = apply_changes(CleanupItem, current, changes, key_field="id")
            conn.execute(
                "UPDATE cleanup_queue SET record = ? WHERE id = ?", (record_text(updated), item_id)
            )
            return updated

        return await self._db.write(run)

    async def last_sweep(self) -> str | None:
        def run(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT value FROM maintenance WHERE key = ?", (_LAST_SWEEP,)
            ).fetchone()
            return None if row is None else str(row[0])

        return await self._db.read(run)

    async def record_sweep(self, at: str) -> None:
        if not isinstance(at, str) or not at:
            raise InvalidParams("the sweep time is a non-empty ISO string")

        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO maintenance (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_LAST_SWEEP, at),
            )

        await self._db.write(run)
