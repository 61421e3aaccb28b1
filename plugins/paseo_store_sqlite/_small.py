"""The small keyed collections: push tokens, managed processes and plugin sources."""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import (
    GitPluginSource,
    ManagedProcessRecord,
    NpmPluginSource,
    PluginSourceRecord,
)
from paseo_hookspecs.store import (
    ManagedProcessRepository,
    PluginSourceRepository,
    PushTokenRepository,
)
from pydantic import TypeAdapter, ValidationError

from paseo_store_sqlite._codec import checked_text, record_text
from paseo_store_sqlite._database import Database
from paseo_store_sqlite._rows import parse, parse_with, read_one

_PLUGIN_SOURCE: TypeAdapter[Any] = TypeAdapter(PluginSourceRecord)


def _plugin_source_text(record: PluginSourceRecord) -> str:
    """The stored form of a plugin source, strictly re-validated as one."""
    if not isinstance(record, GitPluginSource | NpmPluginSource):
        raise InvalidParams(f"expected a plugin source, got {type(record).__name__}")
    text = record_text(record)
    try:
        _PLUGIN_SOURCE.validate_json(text)
    except ValidationError as exc:
        raise InvalidParams(f"invalid plugin source: {exc}") from exc
    return text


class SqlitePushTokenRepository(PushTokenRepository):
    """Push tokens, as a set listed in the order they were added."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def list(self) -> list[str]:
        def run(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute("SELECT token FROM push_tokens ORDER BY position").fetchall()
            return [row[0] for row in rows]

        return await self._db.read(run)

    async def add(self, token: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute(
                    "INSERT INTO push_tokens (token) VALUES (?) ON CONFLICT (token) DO NOTHING",
                    (token,),
                ).rowcount
            )

        return await self._db.write(run)

    async def remove(self, token: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(conn.execute("DELETE FROM push_tokens WHERE token = ?", (token,)).rowcount)

        return await self._db.write(run)


class SqliteManagedProcessRepository(ManagedProcessRepository):
    """Managed process records, listed by id."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, record_id: str) -> ManagedProcessRecord | None:
        return await read_one(
            self._db,
            "SELECT record FROM managed_processes WHERE id = ?",
            record_id,
            functools.partial(parse, ManagedProcessRecord),
        )

    async def list(self) -> list[ManagedProcessRecord]:
        def run(conn: sqlite3.Connection) -> list[ManagedProcessRecord]:
            rows = conn.execute("SELECT record FROM managed_processes ORDER BY id").fetchall()
            return [parse(ManagedProcessRecord, row[0]) for row in rows]

        return await self._db.read(run)

    async def put(self, record: ManagedProcessRecord) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO managed_processes (id, record) VALUES (?, ?) "
                "ON CONFLICT (id) DO UPDATE SET record = excluded.record",
                (record.id, checked_text(ManagedProcessRecord, record)),
            )

        await self._db.write(run)

    async def delete(self, record_id: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute("DELETE FROM managed_processes WHERE id = ?", (record_id,)).rowcount
            )

        return await self._db.write(run)


class SqlitePluginSourceRepository(PluginSourceRepository):
    """Managed plugin sources keyed by plugin id; a replaced source keeps its place."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, plugin_id: str) -> PluginSourceRecord | None:
        return await read_one(
            self._db,
            "SELECT record FROM plugin_sources WHERE plugin_id = ?",
            plugin_id,
            functools.partial(parse_with, _PLUGIN_SOURCE),
        )

    async def list(self) -> dict[str, PluginSourceRecord]:
        def run(conn: sqlite3.Connection) -> dict[str, PluginSourceRecord]:
            rows = conn.execute(
                "SELECT plugin_id, record FROM plugin_sources ORDER BY position"
            ).fetchall()
            return {row[0]: parse_with(_PLUGIN_SOURCE, row[1]) for row in rows}

        return await self._db.read(run)

    async def put(self, plugin_id: str, record: PluginSourceRecord) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO plugin_sources (plugin_id, record) VALUES (?, ?) "
                "ON CONFLICT (plugin_id) DO UPDATE SET record = excluded.record",
                (plugin_id, _plugin_source_text(record)),
            )

        await self._db.write(run)

    async def delete(self, plugin_id: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute(
                    "DELETE FROM plugin_sources WHERE plugin_id = ?", (plugin_id,)
                ).rowcount
            )

        return await self._db.write(run)
