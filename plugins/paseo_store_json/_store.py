"""The :class:`JsonStore` driver object: wires the repositories and runs open and close."""

from __future__ import annotations

import asyncio
import functools
import time
from pathlib import Path
from typing import Any

from paseo_hookspecs.interfaces.store import Store

from paseo_store_json._collections import (
    JsonPluginSourceRepository,
    JsonProjectRepository,
    JsonPushTokenRepository,
    JsonWorkspaceRepository,
)
from paseo_store_json._core import Core
from paseo_store_json._files import FileOps
from paseo_store_json._index import DEFAULT_CACHE_RECORDS
from paseo_store_json._keeper import IndexKeeper
from paseo_store_json._labels import JsonLabelRepository
from paseo_store_json._load import load_home
from paseo_store_json._per_record import JsonAgentRepository
from paseo_store_json._plugin_records import JsonPluginRecordStore
from paseo_store_json._schedules import JsonManagedProcessRepository, JsonScheduleRepository
from paseo_store_json._timeline import CACHE_TIMELINE_BYTES, JsonTimelineRepository
from paseo_store_json._trash import JsonTrashRepository
from paseo_store_json._usage import RETENTION_DAYS, JsonUsageRepository


class JsonStore(Store):
    """The ``json`` store driver: the TypeScript Paseo home layout, indexed in memory.

    ``file_ops`` replaces the disk operations of a live store (tests inject failures with it);
    by default every write is atomic and durable. ``cache_records`` bounds the full agent and
    schedule records kept in memory (each collection's own bound; tests make it tiny to read
    every record back from its file), ``cache_timeline_bytes`` the timeline lines kept parsed
    (over all timelines).
    """

    name = "json"

    def __init__(
        self,
        home: Path,
        settings: Any = None,
        *,
        file_ops: FileOps | None = None,
        cache_records: int = DEFAULT_CACHE_RECORDS,
        cache_timeline_bytes: int = CACHE_TIMELINE_BYTES,
        usage_retention_days: int = RETENTION_DAYS,
    ) -> None:
        super().__init__(Path(home), settings)
        self._ops = file_ops or FileOps()
        self._cache_records = cache_records
        self._cache_timeline_bytes = cache_timeline_bytes
        self._usage_retention_days = usage_retention_days
        self._build()

    def _build(self) -> None:
        """Fresh repositories around a fresh core (nothing cached survives a reopen)."""
        core = self._core = Core(self.home, self._ops, self.quarantined)
        self.timeline: JsonTimelineRepository = JsonTimelineRepository(
            core, self._cache_timeline_bytes
        )
        self.agents: JsonAgentRepository = JsonAgentRepository(
            core, self.timeline.remove, self._cache_records
        )
        self.schedules: JsonScheduleRepository = JsonScheduleRepository(core, self._cache_records)
        self.projects: JsonProjectRepository = JsonProjectRepository(core)
        self.workspaces: JsonWorkspaceRepository = JsonWorkspaceRepository(core)
        self.labels: JsonLabelRepository = JsonLabelRepository(core, self.workspaces)
        self.push_tokens: JsonPushTokenRepository = JsonPushTokenRepository(core)
        self.managed_processes: JsonManagedProcessRepository = JsonManagedProcessRepository(core)
        self.plugin_sources: JsonPluginSourceRepository = JsonPluginSourceRepository(core)
        self.trash: JsonTrashRepository = JsonTrashRepository(
            core, self.agents, self.timeline.remove
        )
        self.usage: JsonUsageRepository = JsonUsageRepository(self.home, self._usage_retention_days)
        self.timeline.usage = self.usage
        self.plugin_records: JsonPluginRecordStore = JsonPluginRecordStore(self.home)
        self.index_keeper = IndexKeeper(
            self.home, self.agents.files, self.quarantined, self.trash.finish_purges
        )

    @property
    def label_storage_uncertain(self) -> str | None:
        """Why workspace and label writes are frozen, or ``None`` when they are not."""
        return self._core.uncertain

    async def open(self) -> None:
        """Recover and load the home (see the package docstring). A closed store can be opened
        again, which re-runs recovery (and lifts a label-storage freeze)."""
        if self._core.is_open:
            raise RuntimeError("the json store is already open")
        opened_at = time.time()
        loaded = await asyncio.to_thread(load_home, self.home, self._ops)
        self._build()
        await asyncio.to_thread(self.plugin_records.sweep)
        self.quarantined[:] = loaded.quarantined
        self.agents.files.load(loaded.agents)
        self.schedules.files.load(loaded.schedules)
        self.managed_processes.files.load(loaded.processes)
        self.trash.files.load(loaded.cleanup)
        self.trash.last_sweep_at = await asyncio.to_thread(
            JsonTrashRepository.read_sweep, self.home
        )
        for project in loaded.projects:
            self.projects.table.append(project)
        for workspace in loaded.workspaces:
            self.workspaces.table.append(workspace)
        self.labels.catalog = loaded.labels
        self.push_tokens.file = loaded.push
        self.plugin_sources.sources = loaded.plugin_sources
        await asyncio.to_thread(functools.partial(self.usage.load, roll_up=False))
        self._core.is_open = True
        # The agents' index came from its file (or is empty): serving starts now, and the
        # records are read beside it to check the index (see _keeper).
        self.index_keeper.start(indexed=loaded.agents_indexed, opened_at=opened_at)
        # A crash between a turn's end and its usage: settle it now both are loaded.
        await self.usage.recover(self.timeline.stored)
        await asyncio.to_thread(self.usage.roll_up_old)

    def hold_background(self) -> None:
        self.index_keeper.hold()

    async def serving(self) -> None:
        self.index_keeper.release()

    async def close(self) -> None:
        await self.plugin_records.drain()
        was_open = self._core.is_open
        await self._core.close()
        if was_open:
            await self.index_keeper.close()
        await self.usage.close()
        await self.timeline.sync()
        self._ops.close()
