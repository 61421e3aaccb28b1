"""The homes ``bench/scale.py`` measures, built fast enough that a million agents take minutes.

* :func:`json_home`: closed agents laid out as the JSON driver (and TypeScript Paseo) stores
  them, one file each (what a stopped daemon leaves).
* :func:`sqlite_home`: the same records in a SQLite home. The schema, the project and the
  workspaces go through the driver itself (its migrations, its inserts); the agents are then
  bulk-inserted in the driver's row layout (the same columns ``SqliteAgentRepository.insert``
  writes, the record as its compact JSON) in one transaction. Going through ``paseo store
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


def workspace_count(agents: int) -> int:
    return max(1, min(1000, agents // 10))


def json_home(home: Path, agents: int) -> None:
    """A JSON-layout home of ``agents`` closed agents."""
    project, workspaces, records = build_records(agents, workspace_count(agents))
    for record in records:
        record["lastStatus"] = "closed"
    write_json_home(home, project, workspaces, records)


def _agent_rows(
    agents: int, workspaces: list[dict[str, Any]], template: dict[str, Any]
) -> Iterator[tuple[tuple[Any, ...], list[tuple[str, str, str]]]]:
    """(agents row, its label rows) for each agent, in the driver's column order."""
    from paseo.testing.store_conformance import iso

    rng = random.Random(1)
    labels = template["labels"]
    for i in range(agents):
        workspace = workspaces[i % len(workspaces)]
        agent_id = f"{rng.getrandbits(32):08x}-0000-4000-8000-{i:012x}"
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


def sqlite_home(home: Path, agents: int) -> None:
    """A SQLite home of ``agents`` closed agents (see the module docstring)."""
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
        conn.execute("BEGIN")
        rows: list[tuple[Any, ...]] = []
        label_rows: list[tuple[str, str, str]] = []
        for row, labels in _agent_rows(agents, workspaces, template):
            rows.append(row)
            label_rows.extend(labels)
            if len(rows) >= BATCH:
                _flush(conn, rows, label_rows)
        _flush(conn, rows, label_rows)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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
