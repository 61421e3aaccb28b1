"""The homes ``bench/scale.py`` measures, built fast enough that a million agents take minutes.

* :func:`json_home`: closed agents laid out as the JSON driver (and TypeScript Paseo) stores
  them, one file each (what a stopped daemon leaves).
* :func:`sqlite_home`: the same records in a SQLite home. The schema, the project and the
  workspaces go through the driver itself (its migrations, its inserts); the agents are then
  bulk-inserted in the driver's row layout (the same columns ``SqliteAgentRepository.insert``
  writes, the record as its compact JSON) in one transaction, in primary-key order, with the
  agent tables' secondary indexes dropped and rebuilt from the migrations' own SQL afterwards
  (100,000 agents in 8 s here, checked; the build before took 36 minutes for a million). Then
  :func:`check_sqlite_home` reads it back through the driver (counts, the first page, one
  workspace's count, ``PRAGMA integrity_check``). Going through ``paseo store
  migrate`` instead would first write a million JSON files, then read them back: hours, not
  minutes.

Records vary as the daemon's do (ids, creation times, over 1,000 workspaces and 50 cwds, one
in ten archived); every record is validated once, as a template, by the driver's own codec.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from paseo_hookspecs import STORE_GROUP
from paseo_hookspecs.records import AgentRecord

from paseo.plugins.drivers import load_driver

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store import build_records, fill_through_driver, write_json_home

SQLITE_FILE = "paseo.db"
BATCH = 20_000
CHECK_UP_TO = 200_000
"""Past this, the check's integrity pass and counts are left to ``check=True``."""


def workspace_count(agents: int) -> int:
    return max(1, min(1000, agents // 10))


def json_home(home: Path, agents: int) -> None:
    """A JSON-layout home of ``agents`` closed agents."""
    project, workspaces, records = build_records(agents, workspace_count(agents))
    for record in records:
        record["lastStatus"] = "closed"
    write_json_home(home, project, workspaces, records)


def _agent_ids(agents: int) -> list[str]:
    """Every agent's id (random-looking, as the daemon's uuid4s are), in primary-key order.

    Inserting in key order appends to the primary key's b-tree (and the labels', keyed by agent
    id first) instead of touching a random page per row: at a million rows the random order
    spilled SQLite's page cache on every insert (the 36-minute builds).
    """
    rng = random.Random(1)
    return sorted(f"{rng.getrandbits(32):08x}-0000-4000-8000-{i:012x}" for i in range(agents))


def _agent_rows(
    agents: int, workspaces: list[dict[str, Any]], template: dict[str, Any]
) -> Iterator[tuple[tuple[Any, ...], list[tuple[str, str, str]]]]:
    """(agents row, its label rows) for each agent, in the driver's column order."""
    from paseo.testing.store_conformance import iso

    rng = random.Random(2)
    labels = template["labels"]
    for agent_id in _agent_ids(agents):
        # The id's last field is the agent's number: workspace and archiving follow it, so they
        # do not depend on the key order the rows are written in.
        i = int(agent_id[-12:], 16)
        workspace = workspaces[i % len(workspaces)]
        created = iso(rng.randrange(10**8))
        archived = iso(2 * 10**8) if i % 10 == 0 else None
        record = {
            **template,
            "id": agent_id,
            "cwd": workspace["cwd"],
            "workspaceId": workspace["workspaceId"],
            "createdAt": created,
            "updatedAt": created,
            "lastActivityAt": created,
            "lastUserMessageAt": created,
        }
        if archived is not None:
            record["archivedAt"] = archived
        row = (
            agent_id,
            workspace["workspaceId"],
            record["provider"],
            record["lastStatus"],
            archived,
            1 if record.get("requiresAttention") else 0,
            created,
            None,
            orjson.dumps(record).decode(),
        )
        yield row, [(agent_id, key, value) for key, value in labels.items()]


def _template() -> dict[str, Any]:
    """One closed agent record, validated and encoded by the SQLite driver's own codec."""
    from paseo_store_sqlite._codec import checked_text

    _project, _workspaces, [record] = build_records(1, 1)
    record["lastStatus"] = "closed"
    record.pop("archivedAt", None)
    text = checked_text(AgentRecord, AgentRecord.model_validate(record))
    data: dict[str, Any] = json.loads(text)
    return data


def sqlite_home(home: Path, agents: int, *, check: bool = False) -> None:
    """A SQLite home of ``agents`` closed agents (see the module docstring); read back and
    checked by :func:`check_sqlite_home` up to :data:`CHECK_UP_TO` agents or if ``check``."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text('{"storage": {"driver": "sqlite"}}\n')
    project, workspaces, _ = build_records(0, workspace_count(agents))

    async def schema_and_registry() -> None:
        store = load_driver(STORE_GROUP, "sqlite")(home, None)
        await store.open()
        try:
            await fill_through_driver(store, project, workspaces, [])
        finally:
            await store.close()

    asyncio.run(schema_and_registry())
    template = _template()
    conn = sqlite3.connect(home / SQLITE_FILE, isolation_level=None)
    try:
        # The build only: the bench measures the daemon on the finished file, written whole
        # before it starts (the daemon's own connections keep synchronous=FULL).
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -131072")  # 128 MiB, for the index builds' sorts
        conn.execute("BEGIN")
        # The agent tables' secondary indexes, exactly as the migrations created them: dropped
        # for the insert and built again once over the finished table (one sort each), which
        # is minutes faster at a million rows than keeping eight indexes up to date per row.
        indexes = _secondary_indexes(conn)
        for name, _sql in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        rows: list[tuple[Any, ...]] = []
        label_rows: list[tuple[str, str, str]] = []
        for row, labels in _agent_rows(agents, workspaces, template):
            rows.append(row)
            label_rows.extend(labels)
            if len(rows) >= BATCH:
                _flush(conn, rows, label_rows)
        _flush(conn, rows, label_rows)
        for _name, sql in indexes:
            conn.execute(sql)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    if agents <= CHECK_UP_TO or check:
        check_sqlite_home(home, agents)


def _secondary_indexes(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(name, CREATE INDEX statement) of the agent tables' explicit indexes (not the primary
    keys' automatic ones, which have no SQL and cannot be dropped)."""
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "AND tbl_name IN ('agents', 'agent_labels') ORDER BY name"
    ).fetchall()
    return [(str(name), str(sql)) for name, sql in rows]


def check_sqlite_home(home: Path, agents: int) -> None:
    """The built home read back through the driver: it opens as a real home (its migrations
    all recorded), and lists and counts what was written. Raises ``AssertionError`` if not."""
    from paseo_hookspecs.store import AgentFilter

    expected_live = sum(1 for i in range(agents) if i % 10 != 0)
    workspaces = workspace_count(agents)

    async def check() -> None:
        store = load_driver(STORE_GROUP, "sqlite")(home, None)
        await store.open()
        try:
            total = await store.agents.count(AgentFilter(include_archived=True))
            assert total == agents, f"{total} agents stored, {agents} written"
            live = await store.agents.count(AgentFilter())
            assert live == expected_live, f"{live} live agents, {expected_live} expected"
            page = await store.agents.list(AgentFilter(), limit=20, newest_first=True)
            assert len(page.items) == min(20, expected_live), len(page.items)
            created = [item.createdAt for item in page.items]
            assert created == sorted(created, reverse=True), "the page is not newest first"
            assert all(item.archivedAt is None for item in page.items)
            first = page.items[0] if page.items else None
            if first is not None:
                assert await store.agents.get(first.id) == first
                i = int(first.id[-12:], 16)
                assert first.workspaceId == f"wks_{i % workspaces:016x}", first.workspaceId
                one = await store.agents.count(AgentFilter(workspace_id=first.workspaceId))
                expected = sum(
                    1 for n in range(i % workspaces, agents, workspaces) if n % 10 != 0
                )
                assert one == expected, f"{one} agents in {first.workspaceId}, {expected} expected"
        finally:
            await store.close()

    asyncio.run(check())
    conn = sqlite3.connect(home / SQLITE_FILE)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def _flush(
    conn: sqlite3.Connection, rows: list[tuple[Any, ...]], labels: list[tuple[str, str, str]]
) -> None:
    conn.executemany(
        "INSERT INTO agents (id, workspace_id, provider, last_status, archived_at, "
        "requires_attention, created_at, deleted_at, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.executemany("INSERT INTO agent_labels (agent_id, key, value) VALUES (?, ?, ?)", labels)
    rows.clear()
    labels.clear()
