"""Repositories over one file per record: agents, schedules and managed processes.

:class:`RecordFiles` is what they share: the in-memory table of one record kind and the
per-id locked write of its files.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.records import (
    AgentRecord,
    ManagedProcessRecord,
    ScheduleRecord,
    agent_record_path,
    dump_record,
    managed_process_record_path,
    schedule_record_path,
)
from paseo_hookspecs.store import (
    DEFAULT_PAGE_SIZE,
    AgentFilter,
    AgentRepository,
    Changes,
    Expect,
    ManagedProcessRepository,
    Page,
    ScheduleRepository,
)
from pydantic import BaseModel

from paseo_store_json._core import (
    Core,
    KeyedLocks,
    SortedTable,
    check_expect,
    check_file_id,
    check_limit,
    clone,
    decode_cursor,
    encode_cursor,
    revalidated,
    validated,
    with_changes,
)

log = logging.getLogger("paseo.store.json")

M = TypeVar("M", bound=BaseModel)



class RecordFiles(Generic[M]):
    """A collection stored as one JSON file per record, cached in a :class:`SortedTable`.

    Writes for one id are serialized by a per-id lock; different ids write in parallel. A
    record whose path changes (an agent whose cwd moved) is written at the new path first and
    the old file removed after, so a crash in between leaves two files that the next open
    resolves in favour of the canonical one.
    """

    def __init__(
        self, core: Core, model: type[M], kind: str, relative_path: Callable[[M], Any]
    ) -> None:
        self.core = core
        self.model = model
        self.kind = kind
        self._relative_path = relative_path
        self.table: SortedTable[M] = SortedTable("id")
        self.paths: dict[str, str] = {}
        """Where each record's file is (``str``: 10,000 ``Path`` objects slow a cold start)."""
        self.locks = KeyedLocks()

    def load(self, rows: Mapping[str, tuple[M, str]]) -> None:
        self.table.load(row for row, _path in rows.values())
        self.paths = {row_id: path for row_id, (_row, path) in rows.items()}

    def path_for(self, row: M) -> Path:
        return Path(self.core.home / self._relative_path(row))

    async def get(self, row_id: str) -> M | None:
        self.core.check_open()
        row = self.table.rows.get(row_id)
        return None if row is None else clone(row)

    async def insert(self, record: M) -> bool:
        row, encoded = revalidated(self.model, record)
        row_id = str(row.id)  # type: ignore[attr-defined]
        check_file_id(self.kind, row_id)

        async def operation() -> bool:
            async with self.locks.hold(row_id):
                if row_id in self.table.rows:
                    return False
                await self._store(row, encoded)
                return True

        return await self.core.write(operation)

    async def update(
        self,
        row_id: str,
        changes: Changes,
        expect: Expect | None,
        edit: Callable[[M], M] | None = None,
    ) -> M:
        async def operation() -> M:
            async with self.locks.hold(row_id):
                current = self.table.rows.get(row_id)
                if current is None:
                    raise NotFound(f"{self.kind} {row_id} not found")
                check_expect(current, expect)
                base = current if edit is None else edit(current)
                row, encoded = with_changes(self.model, base, changes, "id")
                await self._store(row, encoded)
                return clone(row)

        return await self.core.write(operation)

    async def put(self, record: M) -> None:
        row, encoded = revalidated(self.model, record)
        row_id = str(row.id)  # type: ignore[attr-defined]
        check_file_id(self.kind, row_id)

        async def operation() -> None:
            async with self.locks.hold(row_id):
                await self._store(row, encoded)

        await self.core.write(operation)

    async def _store(self, row: M, encoded: bytes) -> None:
        """Write ``row`` durably, then publish it to memory."""
        row_id = str(row.id)  # type: ignore[attr-defined]
        path = self.path_for(row)
        old = self.paths.get(row_id)
        old_path = None if old is None else Path(old)
        ops = self.core.ops

        def work() -> None:
            ops.write_bytes(path, encoded)
            if old_path is None or old_path == path:
                return
            try:
                ops.remove(old_path)
            except OSError:
                try:
                    ops.remove(path)
                except OSError:
                    # Both files now exist and the new one is durable: keep it (the next open
                    # prefers the canonical, newer file and quarantines the old one).
                    log.exception("could not remove %s after moving it to %s", old_path, path)
                    return
                raise

        await self.core.io(work, f"writing {self.kind} {row_id} ({path})")
        self.table.put(row)
        self.paths[row_id] = str(path)

    async def delete(self, row_id: str, after: Callable[[], Any] | None = None) -> bool:
        async def operation() -> bool:
            async with self.locks.hold(row_id):
                stored = self.paths.get(row_id)
                if stored is None:
                    return False
                path = Path(stored)
                await self.core.io(
                    lambda: self.core.ops.remove(path), f"deleting {self.kind} {row_id} ({path})"
                )
                self.table.pop(row_id)
                del self.paths[row_id]
                if after is not None:
                    await after()
                return True

        return await self.core.write(operation)

    def page(
        self, cursor: str | None, limit: int, keep: Callable[[M], bool], cursor_kind: str
    ) -> Page[M]:
        self.core.check_open()
        size = check_limit(limit)
        start = None if cursor is None else decode_cursor(cursor, cursor_kind, (str, str))
        items: list[M] = []
        last_key: tuple[str, str] | None = None
        for key, row in self.table.after(start):
            if not keep(row):
                continue
            if len(items) == size:
                assert last_key is not None
                return Page(items, encode_cursor(cursor_kind, *last_key))
            items.append(clone(row))
            last_key = key
        return Page(items, None)


# --- agents ----------------------------------------------------------------------------------

_EVERY_AGENT = AgentFilter()


def _agent_matches(flt: AgentFilter) -> Callable[[AgentRecord], bool]:
    def keep(agent: AgentRecord) -> bool:
        if not flt.include_archived and agent.archivedAt is not None:
            return False
        if flt.trashed is not None and (agent.deletedAt is not None) != flt.trashed:
            return False
        if flt.workspace_id is not None and agent.workspaceId != flt.workspace_id:
            return False
        if flt.provider is not None and agent.provider != flt.provider:
            return False
        if flt.statuses is not None and agent.lastStatus not in flt.statuses:
            return False
        if any(agent.labels.get(key) != value for key, value in flt.labels.items()):
            return False
        return not (
            flt.requires_attention is not None
            and bool(agent.requiresAttention) != flt.requires_attention
        )

    return keep


class JsonAgentRepository(AgentRepository):
    """Agents in ``agents/{sanitized-cwd}/{agentId}.json``."""

    def __init__(self, core: Core, timeline_delete: Callable[[str], Any]) -> None:
        self.files: RecordFiles[AgentRecord] = RecordFiles(
            core, AgentRecord, "agent", lambda row: agent_record_path(row.id, row.cwd)
        )
        self._timeline_delete = timeline_delete

    async def get(self, agent_id: str) -> AgentRecord | None:
        return await self.files.get(agent_id)

    async def list(
        self,
        filter: AgentFilter = _EVERY_AGENT,
        *,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[AgentRecord]:
        return self.files.page(cursor, limit, _agent_matches(filter), "agents")

    async def count(self, filter: AgentFilter = _EVERY_AGENT) -> int:
        self.files.core.check_open()
        keep = _agent_matches(filter)
        return sum(1 for row in self.files.table.rows.values() if keep(row))

    async def insert(self, record: AgentRecord) -> bool:
        return await self.files.insert(record)

    async def update(
        self, agent_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> AgentRecord:
        return await self.files.update(agent_id, changes, expect)

    async def delete(self, agent_id: str) -> bool:
        # The record goes first: if removing the timeline then fails, the agent is gone and an
        # orphan timeline remains (logged), rather than an agent whose history vanished.
        async def drop_timeline() -> None:
            try:
                await self._timeline_delete(agent_id)
            except Exception:
                log.exception("agent %s deleted but its timeline could not be removed", agent_id)

        return await self.files.delete(agent_id, after=drop_timeline)


# --- schedules -------------------------------------------------------------------------------


class JsonScheduleRepository(ScheduleRepository):
    """Schedules in ``schedules/{id}.json``."""

    def __init__(self, core: Core) -> None:
        self.files: RecordFiles[ScheduleRecord] = RecordFiles(
            core, ScheduleRecord, "schedule", lambda row: schedule_record_path(row.id)
        )

    async def get(self, schedule_id: str) -> ScheduleRecord | None:
        return await self.files.get(schedule_id)

    async def list(
        self,
        *,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[ScheduleRecord]:
        return self.files.page(
            cursor, limit, lambda row: status is None or row.status == status, "schedules"
        )

    async def insert(self, record: ScheduleRecord) -> bool:
        return await self.files.insert(record)

    async def update(
        self, schedule_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> ScheduleRecord:
        return await self.files.update(schedule_id, changes, expect)

    async def upsert_run(
        self, schedule_id: str, run: Mapping[str, Any], changes: Changes | None = None
    ) -> ScheduleRecord:
        run_id = run.get("id") if isinstance(run, Mapping) else None
        if not isinstance(run_id, str):
            raise InvalidParams("a schedule run needs a string id")

        def add_run(current: ScheduleRecord) -> ScheduleRecord:
            data = dump_record(current)
            runs = data.get("runs", [])
            if any(existing.get("id") == run_id for existing in runs):
                # A replaced run keeps its place in the history.
                data["runs"] = [dict(run) if r.get("id") == run_id else r for r in runs]
            else:
                data["runs"] = [*runs, dict(run)]
            return validated(ScheduleRecord, data)[0]

        return await self.files.update(schedule_id, changes or {}, None, edit=add_run)

    async def delete(self, schedule_id: str) -> bool:
        return await self.files.delete(schedule_id)


# --- managed processes -----------------------------------------------------------------------


class JsonManagedProcessRepository(ManagedProcessRepository):
    """Helper processes in ``runtime/managed-processes/{id}.json``."""

    def __init__(self, core: Core) -> None:
        self.files: RecordFiles[ManagedProcessRecord] = RecordFiles(
            core,
            ManagedProcessRecord,
            "managed process",
            lambda row: managed_process_record_path(row.id),
        )

    async def get(self, record_id: str) -> ManagedProcessRecord | None:
        return await self.files.get(record_id)

    async def list(self) -> list[ManagedProcessRecord]:
        self.files.core.check_open()
        return [clone(row) for _key, row in self.files.table.after(None)]

    async def put(self, record: ManagedProcessRecord) -> None:
        await self.files.put(record)

    async def delete(self, record_id: str) -> bool:
        return await self.files.delete(record_id)


__all__ = [
    "JsonAgentRepository",
    "JsonManagedProcessRepository",
    "JsonScheduleRepository",
    "RecordFiles",
]
