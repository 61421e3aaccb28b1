"""The :class:`SqliteStore` driver class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paseo_hookspecs.interfaces.store import Store

from paseo_store_sqlite._agents import SqliteAgentRepository, SqliteTimelineRepository
from paseo_store_sqlite._database import Database
from paseo_store_sqlite._plugin_records import SqlitePluginRecordStore
from paseo_store_sqlite._registry import (
    LabelStorageGuard,
    SqliteLabelRepository,
    SqliteProjectRepository,
    SqliteWorkspaceRepository,
)
from paseo_store_sqlite._schedules import SqliteScheduleRepository
from paseo_store_sqlite._small import (
    SqliteManagedProcessRepository,
    SqlitePluginSourceRepository,
    SqlitePushTokenRepository,
)
from paseo_store_sqlite._trash import SqliteTrashRepository
from paseo_store_sqlite._usage import SqliteUsageRepository

DATABASE_FILE = "paseo.db"
"""The database's file name inside ``$PASEO_HOME``."""


class SqliteStore(Store):
    """Every repository backed by one SQLite database in WAL mode.

    Durability: each mutation is one transaction committed with ``synchronous=FULL``, so a
    method that returned survives SIGKILL and power loss, and one that raised changed nothing.
    There are no record files, so :attr:`quarantined` stays empty: a damaged row surfaces as a
    ``StorageError`` when read.
    """

    name = "sqlite"

    def __init__(self, home: Path, settings: Any = None) -> None:
        super().__init__(home, settings)
        self.path = Path(home) / DATABASE_FILE
        self.database = Database(self.path)
        guard = LabelStorageGuard()
        self.agents = SqliteAgentRepository(self.database)
        self.timeline = SqliteTimelineRepository(self.database)
        self.schedules = SqliteScheduleRepository(self.database)
        self.projects = SqliteProjectRepository(self.database)
        self.workspaces = SqliteWorkspaceRepository(self.database, guard)
        self.labels = SqliteLabelRepository(self.database, guard)
        self.push_tokens = SqlitePushTokenRepository(self.database)
        self.managed_processes = SqliteManagedProcessRepository(self.database)
        self.plugin_sources = SqlitePluginSourceRepository(self.database)
        self.trash = SqliteTrashRepository(self.database)
        self.usage: SqliteUsageRepository = SqliteUsageRepository(self.database)
        self.plugin_records: SqlitePluginRecordStore = SqlitePluginRecordStore(self.database)
        self._guard = guard

    async def open(self) -> None:
        """Open the database (creating it), apply pending migrations; a fresh open also lifts
        a label-storage freeze, since SQLite's own recovery has settled the last transaction."""
        self._guard.uncertain = False
        await self.database.open()
        await self.usage.roll_up_old()

    async def close(self) -> None:
        """Finish queued writes and close every connection. Idempotent."""
        await self.database.close()
