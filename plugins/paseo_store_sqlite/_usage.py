"""Usage accounting in the ``usage`` table: one row a record, rolled up per day past the window.

Rows keep the record whole (``record``) and copy the columns queries filter on. Totals are
computed from the records by :func:`paseo_hookspecs.usage.aggregate`, so both drivers answer
with the same arithmetic (unknown cost stays unknown). At open, days older than
:data:`RETENTION_DAYS` are replaced by their roll-ups in one transaction.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

from paseo_hookspecs.records import dump_record
from paseo_hookspecs.usage import (
    USAGE_GROUPS,
    UsageGroup,
    UsageRecord,
    UsageRepository,
    UsageTotals,
    aggregate,
    roll_up,
)

from paseo_store_sqlite._codec import checked_text, record_text
from paseo_store_sqlite._database import Database
from paseo_store_sqlite._rows import parse

RETENTION_DAYS = 90
"""Days whose per-turn records are kept; older days are kept as daily roll-ups."""

USAGE_INSERT = (
    "INSERT INTO usage (id, at, day, agent_id, record) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO NOTHING"
)


class SqliteUsageRepository(UsageRepository):
    """See the module docstring."""

    def __init__(self, db: Database, retention_days: int = RETENTION_DAYS) -> None:
        self._db = db
        self.retention_days = retention_days

    async def add(self, record: UsageRecord) -> bool:
        text = checked_text(UsageRecord, record)

        def run(conn: sqlite3.Connection) -> bool:
            row = (record.id, record.at, record.at[:10], record.agentId, text)
            return bool(conn.execute(USAGE_INSERT, row).rowcount)

        return await self._db.write(run)

    async def query(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        agent_id: str | None = None,
        group_by: UsageGroup = "agent",
    ) -> list[UsageTotals]:
        if group_by not in USAGE_GROUPS:
            raise ValueError(f"unknown usage grouping {group_by!r}")
        clauses, params = [], []
        if since is not None:
            clauses.append("at >= ?")
            params.append(since)
        if until is not None:
            clauses.append("at < ?")
            params.append(until)
        if agent_id is not None:
            clauses.append("agent_id = ?")
            params.append(agent_id)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""

        def run(conn: sqlite3.Connection) -> list[UsageRecord]:
            rows = conn.execute(f"SELECT record FROM usage{where}", params).fetchall()  # noqa: S608 - fixed clauses
            return [parse(UsageRecord, row[0]) for row in rows]

        return aggregate(await self._db.read(run), group_by)

    async def roll_up_old(self, now: datetime | None = None) -> int:
        """Replace the records of days past the window by their roll-ups; returns how many
        rows were replaced."""
        moment = now or datetime.now(UTC)
        cutoff = (moment - timedelta(days=self.retention_days)).date().isoformat()

        def run(conn: sqlite3.Connection) -> int:
            rows = conn.execute("SELECT record FROM usage WHERE day < ?", (cutoff,)).fetchall()
            old = [parse(UsageRecord, row[0]) for row in rows]
            rolled = roll_up(old)
            if len(rolled) == len(old):
                return 0  # already one row per day and dimension tuple
            conn.execute("DELETE FROM usage WHERE day < ?", (cutoff,))
            for record in rolled:
                text = record_text(UsageRecord.model_validate(dump_record(record)))
                conn.execute(
                    USAGE_INSERT, (record.id, record.at, record.at[:10], record.agentId, text)
                )
            return len(old)

        return await self._db.write(run)
