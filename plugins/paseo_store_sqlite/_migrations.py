"""Forward-only schema migrations with immutable identifiers.

A migration is an ``(id, sql)`` pair. Once any database may have recorded an id in
``schema_migrations``, that migration's SQL never changes: a later table, column or index gets a
*new* migration appended to :data:`MIGRATIONS`. Each pending migration is applied in its own
transaction together with its ``schema_migrations`` row, so a crash leaves it either fully applied
and recorded or not applied at all. A database that records an id this version does not know was
written by a newer Paseo and is refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from paseo_hookspecs.errors import StorageError


@dataclass(frozen=True)
class Migration:
    """One schema step: an immutable identifier and the SQL it runs."""

    id: str
    sql: str


# Records are stored whole as their ``dump_record`` JSON (``record``), so reads are lossless,
# unknown fields included; the other columns copy the few fields that filters, sort orders and
# uniqueness checks need, and are rewritten from the record on every write.
_INITIAL_SCHEMA = """
CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    workspace_id TEXT,
    provider TEXT NOT NULL,
    last_status TEXT NOT NULL,
    archived_at TEXT,
    requires_attention INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX agents_by_created ON agents (created_at, id);
CREATE INDEX agents_by_workspace ON agents (workspace_id, created_at, id);

CREATE TABLE agent_labels (
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (agent_id, key)
) WITHOUT ROWID;
CREATE INDEX agent_labels_by_pair ON agent_labels (key, value);

CREATE TABLE timeline (
    agent_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    epoch TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (agent_id, seq)
) WITHOUT ROWID;

CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX schedules_by_created ON schedules (created_at, id);
CREATE INDEX schedules_by_status ON schedules (status, created_at, id);

CREATE TABLE projects (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT NOT NULL UNIQUE,
    root_path TEXT NOT NULL,
    archived INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX projects_by_root ON projects (root_path, archived);

CREATE TABLE workspaces (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    cwd TEXT NOT NULL,
    archived INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX workspaces_by_project ON workspaces (project_id, position);
CREATE INDEX workspaces_by_cwd ON workspaces (cwd, position);

CREATE TABLE workspace_labels (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    identity TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL
);

CREATE TABLE push_tokens (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE
);

CREATE TABLE managed_processes (
    id TEXT PRIMARY KEY,
    record TEXT NOT NULL
);

CREATE TABLE plugin_sources (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    plugin_id TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL
);
"""

_AGENT_LOOKUPS = """
-- Boot loads the agents a stopped daemon left live, by status: without this index that is a
-- scan of every agent row, so start-up would grow with the number of agents.
CREATE INDEX agents_by_status ON agents (last_status, created_at, id);
-- Agents are named by title too: a virtual column of the record's title, indexed, spares
-- parsing every record to find one.
ALTER TABLE agents ADD COLUMN title TEXT
    GENERATED ALWAYS AS (json_extract(record, '$.title')) VIRTUAL;
CREATE INDEX agents_by_title ON agents (title);
"""

# The trash: tombstones are agents with ``deletedAt`` (copied into ``deleted_at`` so listings
# filter them in SQL); a purge deletes the agent and inserts its cleanup item in one transaction;
# ``maintenance`` holds the last automatic sweep.
_TRASH = """
ALTER TABLE agents ADD COLUMN deleted_at TEXT;
UPDATE agents SET deleted_at = json_extract(record, '$.deletedAt');
CREATE TABLE cleanup_queue (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX cleanup_queue_by_created ON cleanup_queue (created_at, id);
CREATE TABLE maintenance (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

# Usage accounting: one row per finished turn (or per day and dimension tuple once rolled up);
# ``day`` is the UTC day of ``at``, which roll-ups select by.
_USAGE = """
CREATE TABLE usage (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    day TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX usage_by_at ON usage (at);
CREATE INDEX usage_by_agent ON usage (agent_id, at);
CREATE INDEX usage_by_day ON usage (day);
"""

# Listing and counting the live agents (`paseo ls`: its page, newest first, and its total,
# "N more") and the trash's search for tombstones filter on archived_at and deleted_at, which no
# index held: each walked every agent row, record included (seconds at a million agents). Each
# partial index holds just the rows its listing returns, in listing order, and covers a count
# of them; the planner uses one only where the query's conditions imply the index's, so the
# other lookups (by status, workspace, title) keep their indexes. The count of the live agents
# reads agents_live_count instead, whose entries are a null and a rowid: a fifth of the bytes.
_AGENT_COUNTS = """
CREATE INDEX agents_live ON agents (created_at, id)
    WHERE deleted_at IS NULL AND archived_at IS NULL;
CREATE INDEX agents_live_count ON agents (archived_at)
    WHERE deleted_at IS NULL AND archived_at IS NULL;
CREATE INDEX agents_trashed ON agents (created_at, id) WHERE deleted_at IS NOT NULL;
"""

# Timeline rows move to a rowid table beside a unique (agent_id, seq) index. In the WITHOUT ROWID
# table the whole row lived in the primary key's b-tree, whose cells keep at most ~1 KB of a row
# on its page: a typical entry of 1-2 KB spilled into overflow pages of its own, over 4 KB of
# file per entry (a 1 GiB timeline took 4.4 GiB). A table b-tree keeps rows of up to ~4 KB whole
# on shared pages; the index holds just the key and the rowid. Reads of a page by seq are the
# same LIMIT query over the index.
_TIMELINE_ROWS = """
CREATE TABLE timeline_rows (
    agent_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    epoch TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    entry TEXT NOT NULL
);
INSERT INTO timeline_rows (agent_id, seq, epoch, timestamp, entry)
    SELECT agent_id, seq, epoch, timestamp, entry FROM timeline ORDER BY agent_id, seq;
DROP TABLE timeline;
ALTER TABLE timeline_rows RENAME TO timeline;
CREATE UNIQUE INDEX timeline_by_seq ON timeline (agent_id, seq);
"""

# Plugins' own records (paseo_hookspecs.plugin_records): one row per record, the value's JSON
# whole; the primary key is the listing order (a page is one range scan) and the uniqueness.
_PLUGIN_RECORDS = """
CREATE TABLE plugin_records (
    namespace TEXT NOT NULL,
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    updated TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (namespace, collection, id)
) WITHOUT ROWID;
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_initial_schema", _INITIAL_SCHEMA),
    Migration("0002_agent_lookups", _AGENT_LOOKUPS),
    Migration("0003_trash", _TRASH),
    Migration("0004_usage", _USAGE),
    Migration("0005_agent_counts", _AGENT_COUNTS),
    Migration("0006_plugin_records", _PLUGIN_RECORDS),
    Migration("0007_timeline_rows", _TIMELINE_ROWS),
)
"""Every migration, in the order they apply. Append only; never edit or reorder."""


def split_statements(sql: str) -> list[str]:
    """``sql`` cut into complete statements.

    ``executescript`` would commit the surrounding transaction first, so statements run one by
    one inside the migration's own transaction instead.
    """
    statements: list[str] = []
    buffer = ""
    for piece in sql.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\r\n;"):
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip(" \t\r\n;"):
        statements.append(buffer.strip())
    return statements


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """The identifiers recorded in ``schema_migrations``, oldest first."""
    rows = conn.execute("SELECT id FROM schema_migrations ORDER BY applied_at, id").fetchall()
    return [row[0] for row in rows]


def migrate(conn: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[str]:
    """Bring the database up to date; return the identifiers applied now.

    Raises :class:`StorageError` when the database records a migration ``migrations`` does not
    contain (a newer Paseo wrote it), before changing anything.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    known = {migration.id for migration in migrations}
    unknown = [ident for ident in applied_migrations(conn) if ident not in known]
    if unknown:
        msg = (
            f"the database was written by a newer Paseo: it records unknown migrations "
            f"{', '.join(unknown)}; upgrade Paseo to open it"
        )
        raise StorageError(msg, data={"unknownMigrations": unknown})
    applied_now: list[str] = []
    for migration in migrations:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-checked inside the write lock: another process may have applied it meanwhile.
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE id = ?", (migration.id,)
            ).fetchone()
            if done is None:
                for statement in split_statements(migration.sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)",
                    (migration.id, datetime.now(UTC).isoformat()),
                )
                applied_now.append(migration.id)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return applied_now
