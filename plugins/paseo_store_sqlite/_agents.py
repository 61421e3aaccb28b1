"""Agents (with their labels in a side table for filtering) and agent timelines."""

from __future__ import annotations

import functools
import itertools
import sqlite3
from collections.abc import Sequence
from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams
from paseo_hookspecs.records import AgentRecord, TimelineEntry
from paseo_hookspecs.store import (
    DEFAULT_PAGE_SIZE,
    AgentFilter,
    AgentRepository,
    Changes,
    Expect,
    Page,
    TimelineRepository,
)
from paseo_hookspecs.usage import UsageRecord

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
from paseo_store_sqlite._usage import USAGE_INSERT

_AGENT_COLUMNS = (
    "id, workspace_id, provider, last_status, archived_at, requires_attention, created_at, "
    "deleted_at, record"
)


def _agent_row(record: AgentRecord, text: str) -> tuple[Any, ...]:
    return (
        record.id,
        record.workspaceId,
        record.provider,
        record.lastStatus,
        record.archivedAt,
        1 if record.requiresAttention else 0,
        record.createdAt,
        record.deletedAt,
        text,
    )


def _write_labels(conn: sqlite3.Connection, record: AgentRecord) -> None:
    conn.execute("DELETE FROM agent_labels WHERE agent_id = ?", (record.id,))
    conn.executemany(
        "INSERT INTO agent_labels (agent_id, key, value) VALUES (?, ?, ?)",
        [(record.id, key, value) for key, value in record.labels.items()],
    )


def _where(filter: AgentFilter) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if not filter.include_archived:
        clauses.append("archived_at IS NULL")
    if filter.trashed is not None:
        clauses.append("deleted_at IS NOT NULL" if filter.trashed else "deleted_at IS NULL")
    if filter.workspace_id is not None:
        clauses.append("workspace_id = ?")
        params.append(filter.workspace_id)
    if filter.without_workspace:
        clauses.append("workspace_id IS NULL")
    if filter.provider is not None:
        clauses.append("provider = ?")
        params.append(filter.provider)
    if filter.statuses is not None:
        statuses = sorted(filter.statuses)
        if statuses:
            clauses.append(f"last_status IN ({', '.join('?' * len(statuses))})")
            params.extend(statuses)
        else:
            clauses.append("0")
    for key, value in filter.labels.items():
        # The agents having the pair, from the pair's index: an EXISTS probe per row instead
        # walked every agent in listing order (start-up's label searches, a million probes at
        # a million agents).
        clauses.append("id IN (SELECT agent_id FROM agent_labels WHERE key = ? AND value = ?)")
        params.extend((key, value))
    if filter.requires_attention is not None:
        clauses.append("requires_attention = ?")
        params.append(1 if filter.requires_attention else 0)
    if filter.id_prefix is not None:
        # Ids are ASCII; a range on the lowered id would skip the primary key, but naming an
        # agent by a prefix is rare next to listing.
        clauses.append("substr(lower(id), 1, ?) = ?")
        params.extend((len(filter.id_prefix), filter.id_prefix.lower()))
    if filter.title is not None:
        clauses.append("title = ?")
        params.append(filter.title)
    return clauses, params


_BY_ID = "INDEXED BY sqlite_autoindex_agents_1"
"""The primary key's index (``id TEXT PRIMARY KEY`` of migration 0001)."""


def _index_for(filter: AgentFilter, *, listing: bool) -> str:
    """The index a listing page (or a count) is read through, where the planner, which has no
    statistics, would pick a worse one:

    * a label filter is driven from the label pairs' index (each pair's agents, looked up by
      id): left alone the planner walks every live agent and probes each one's labels, which
      at a million agents is seconds for start-up's searches of rare labels;
    * the live agents with no narrower criterion (``paseo ls``) are read in order from
      ``agents_live``; left alone the planner prefers the narrower ``agents_live_count`` (built
      for counting them) and sorts every live row to return the first page.
    """
    if filter.labels and filter.title is None:
        return _BY_ID
    narrower = (
        filter.workspace_id is not None
        or filter.without_workspace
        or filter.statuses is not None
        or filter.id_prefix is not None
        or filter.title is not None
    )
    live = not filter.include_archived and filter.trashed is False
    return "INDEXED BY agents_live" if listing and live and not narrower else ""


def _listing_index(filter: AgentFilter) -> str:
    return _index_for(filter, listing=True)


class SqliteAgentRepository(AgentRepository):
    """Agents ordered by ``(createdAt, id)``; keyset pagination on that pair."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, agent_id: str) -> AgentRecord | None:
        return await read_one(
            self._db,
            "SELECT record FROM agents WHERE id = ?",
            agent_id,
            functools.partial(parse, AgentRecord),
        )

    async def list(
        self,
        filter: AgentFilter = AgentFilter(),  # noqa: B008 - the contract's signature
        *,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        newest_first: bool = False,
    ) -> Page[AgentRecord]:
        limit = check_limit(limit)
        clauses, params = _where(filter)
        if cursor is not None:
            created_at, last_id = decode_cursor("agents", cursor, (str, str))
            clauses.append(f"(created_at, id) {'<' if newest_first else '>'} (?, ?)")
            params.extend((created_at, last_id))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        order = "created_at DESC, id DESC" if newest_first else "created_at, id"
        # Only constant SQL fragments are interpolated; every value is a bound parameter.
        index = _listing_index(filter)
        sql = f"SELECT record FROM agents {index} {where} ORDER BY {order} LIMIT ?"  # noqa: S608
        params.append(limit + 1)

        def run(conn: sqlite3.Connection) -> list[AgentRecord]:
            return [parse(AgentRecord, row[0]) for row in conn.execute(sql, params).fetchall()]

        items = await self._db.read(run)
        return page_of(items, limit, "agents", lambda r: (r.createdAt, r.id))

    async def count(self, filter: AgentFilter = AgentFilter()) -> int:  # noqa: B008
        clauses, params = _where(filter)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""

        index = _index_for(filter, listing=False)

        def run(conn: sqlite3.Connection) -> int:
            sql = f"SELECT COUNT(*) FROM agents {index} {where}"  # noqa: S608 - constants only
            return int(conn.execute(sql, params).fetchone()[0])

        return await self._db.read(run)

    async def insert(self, record: AgentRecord) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            inserted = conn.execute(
                f"INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "  # noqa: S608
                "ON CONFLICT (id) DO NOTHING",
                _agent_row(record, checked_text(AgentRecord, record)),
            ).rowcount
            if inserted:
                _write_labels(conn, record)
            return bool(inserted)

        return await self._db.write(run)

    async def update(
        self, agent_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> AgentRecord:
        def run(conn: sqlite3.Connection) -> AgentRecord:
            current = load_current(
                conn, "SELECT record FROM agents WHERE id = ?", agent_id, "agent"
            )
            check_expect(current, expect)
            updated = apply_changes(AgentRecord, current, changes, key_field="id")
            conn.execute(
                "UPDATE agents SET workspace_id = ?, provider = ?, last_status = ?, "
                "archived_at = ?, requires_attention = ?, created_at = ?, deleted_at = ?, "
                "record = ? WHERE id = ?",
                (*_agent_row(updated, record_text(updated))[1:], agent_id),
            )
            _write_labels(conn, updated)
            return updated

        return await self._db.write(run)

    async def delete(self, agent_id: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            # Labels go with the row (ON DELETE CASCADE); the timeline is keyed by id only, so a
            # timeline may be written before its agent, and is removed here explicitly.
            conn.execute("DELETE FROM timeline WHERE agent_id = ?", (agent_id,))
            return bool(conn.execute("DELETE FROM agents WHERE id = ?", (agent_id,)).rowcount)

        return await self._db.write(run)


class SqliteTimelineRepository(TimelineRepository):
    """Timeline entries keyed by ``(agent_id, seq)``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(self, entries: Sequence[TimelineEntry]) -> None:
        await self.append_with_usage(entries, ())

    async def append_with_usage(
        self, entries: Sequence[TimelineEntry], usage: Sequence[UsageRecord]
    ) -> None:
        """The entries and the usage records of the turns they end in one transaction."""
        if not entries:
            return
        usage_rows = [
            (
                record.id,
                record.at,
                record.at[:10],
                record.agentId,
                checked_text(UsageRecord, record),
            )
            for record in usage
        ]
        texts = [checked_text(TimelineEntry, entry) for entry in entries]
        agent_id = entries[0].agentId
        if any(entry.agentId != agent_id for entry in entries):
            raise InvalidParams("one append holds entries of one agent only")
        for previous, entry in itertools.pairwise(entries):
            if entry.seq <= previous.seq:
                raise Conflict(
                    f"timeline seq must increase: {entry.seq} follows {previous.seq}",
                    data={"agentId": agent_id, "seq": entry.seq},
                )

        def run(conn: sqlite3.Connection) -> None:
            last = conn.execute(
                "SELECT MAX(seq) FROM timeline WHERE agent_id = ?", (agent_id,)
            ).fetchone()[0]
            if last is not None and entries[0].seq <= last:
                raise Conflict(
                    f"timeline seq {entries[0].seq} is not after the stored seq {last}",
                    data={"agentId": agent_id, "seq": entries[0].seq, "lastSeq": last},
                )
            conn.executemany(
                "INSERT INTO timeline (agent_id, seq, epoch, timestamp, entry) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (agent_id, entry.seq, entry.epoch, entry.timestamp, text)
                    for entry, text in zip(entries, texts, strict=True)
                ],
            )
            conn.executemany(USAGE_INSERT, usage_rows)

        await self._db.write(run)

    async def read(
        self,
        agent_id: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int | None = None,
        tail: bool = False,
    ) -> list[TimelineEntry]:
        if limit is not None and (isinstance(limit, bool) or limit < 0):
            raise InvalidParams(f"limit must not be negative, got {limit!r}")
        clauses = ["agent_id = ?"]
        params: list[Any] = [agent_id]
        if after_seq is not None:
            clauses.append("seq > ?")
            params.append(after_seq)
        if before_seq is not None:
            clauses.append("seq < ?")
            params.append(before_seq)
        newest_first = tail and limit is not None
        sql = (
            f"SELECT entry FROM timeline WHERE {' AND '.join(clauses)} "  # noqa: S608
            f"ORDER BY seq {'DESC' if newest_first else 'ASC'} LIMIT ?"
        )
        params.append(-1 if limit is None else limit)

        def run(conn: sqlite3.Connection) -> list[TimelineEntry]:
            rows = conn.execute(sql, params).fetchall()
            if newest_first:
                rows.reverse()
            return [parse(TimelineEntry, row[0]) for row in rows]

        return await self._db.read(run)

    async def last(self, agent_id: str) -> TimelineEntry | None:
        def run(conn: sqlite3.Connection) -> TimelineEntry | None:
            row = conn.execute(
                "SELECT entry FROM timeline WHERE agent_id = ? ORDER BY seq DESC LIMIT 1",
                (agent_id,),
            ).fetchone()
            return None if row is None else parse(TimelineEntry, row[0])

        return await self._db.read(run)

    async def delete(self, agent_id: str) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM timeline WHERE agent_id = ?", (agent_id,))

        await self._db.write(run)
