"""Repositories over one file per record (agents, schedules, managed processes) and over
small whole-file collections (projects, workspaces, push tokens, plugin sources)."""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.records import (
    PLUGIN_SOURCES_FILE,
    PROJECTS_FILE,
    PUSH_TOKENS_FILE,
    WORKSPACES_FILE,
    AgentRecord,
    ManagedProcessRecord,
    PluginSource,
    PluginSourceRecord,
    ProjectRecord,
    PushTokensFile,
    ScheduleRecord,
    WorkspaceRecord,
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
    PluginSourceRepository,
    ProjectRepository,
    PushTokenRepository,
    ScheduleRepository,
    WorkspaceRepository,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

from paseo_store_json._core import (
    Core,
    KeyedLocks,
    OrderedTable,
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
from paseo_store_json._files import encode_json

log = logging.getLogger("paseo.store.json")

M = TypeVar("M", bound=BaseModel)

_PLUGIN_SOURCE = TypeAdapter[Any](PluginSource)


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


# --- whole-file collections ------------------------------------------------------------------


def _ordered_page(
    core: Core,
    *,
    table: OrderedTable[M],
    cursor: str | None,
    limit: int,
    keep: Callable[[M], bool],
    kind: str,
) -> Page[M]:
    core.check_open()
    size = check_limit(limit)
    start = None if cursor is None else decode_cursor(cursor, kind, (int, str))
    items: list[M] = []
    last: tuple[int, str] | None = None
    for ordinal, row in table.after(start):
        if not keep(row):
            continue
        if len(items) == size:
            assert last is not None
            return Page(items, encode_cursor(kind, *last))
        items.append(clone(row))
        last = (ordinal, str(getattr(row, table.id_field)))
    return Page(items, None)


def encode_rows(rows: Iterable[BaseModel]) -> bytes:
    return encode_json([dump_record(row) for row in rows])


class JsonProjectRepository(ProjectRepository):
    """The project registry, ``projects/projects.json``, one lock for the whole file."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table: OrderedTable[ProjectRecord] = OrderedTable("projectId")
        self.lock = asyncio.Lock()

    async def get(self, project_id: str) -> ProjectRecord | None:
        self.core.check_open()
        row = self.table.rows.get(project_id)
        return None if row is None else clone(row)

    async def list(
        self,
        *,
        include_archived: bool = False,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[ProjectRecord]:
        return _ordered_page(
            self.core,
            table=self.table,
            cursor=cursor,
            limit=limit,
            keep=lambda row: include_archived or row.archivedAt is None,
            kind="projects",
        )

    async def _write(self, rows: Iterable[ProjectRecord]) -> None:
        data = encode_rows(rows)
        path = self.core.home / PROJECTS_FILE
        await self.core.io(lambda: self.core.ops.write_bytes(path, data), f"writing {path}")

    async def insert_if_root_free(self, record: ProjectRecord) -> tuple[ProjectRecord, bool]:
        row, _encoded = revalidated(ProjectRecord, record)

        async def operation() -> tuple[ProjectRecord, bool]:
            async with self.lock:
                for existing in self.table.rows.values():
                    if existing.archivedAt is None and existing.rootPath == row.rootPath:
                        return clone(existing), False
                if row.projectId in self.table.rows:
                    raise Conflict(f"project id {row.projectId} is taken by another root")
                await self._write([*self.table.rows.values(), row])
                self.table.append(row)
                return clone(row), True

        return await self.core.write(operation)

    async def update(
        self, project_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> ProjectRecord:
        async def operation() -> ProjectRecord:
            async with self.lock:
                current = self.table.rows.get(project_id)
                if current is None:
                    raise NotFound(f"project {project_id} not found")
                check_expect(current, expect)
                row, _encoded = with_changes(ProjectRecord, current, changes, "projectId")
                await self._write(
                    row if key == project_id else other for key, other in self.table.rows.items()
                )
                self.table.replace(row)
                return clone(row)

        return await self.core.write(operation)

    async def delete(self, project_id: str) -> bool:
        async def operation() -> bool:
            async with self.lock:
                if project_id not in self.table.rows:
                    return False
                await self._write(row for key, row in self.table.rows.items() if key != project_id)
                self.table.pop(project_id)
                return True

        return await self.core.write(operation)


class JsonWorkspaceRepository(WorkspaceRepository):
    """The workspace registry, ``projects/workspaces.json``.

    Its lock is also taken by label mutations (always after the label lock), and every write
    is refused while label storage is uncertain.
    """

    def __init__(self, core: Core) -> None:
        self.core = core
        self.table: OrderedTable[WorkspaceRecord] = OrderedTable("workspaceId")
        self.lock = asyncio.Lock()

    @property
    def path(self) -> Path:
        return self.core.home / WORKSPACES_FILE

    def encoded_with(self, replaced: Mapping[str, WorkspaceRecord]) -> bytes:
        """The registry file with some rows replaced (others as cached)."""
        return encode_rows(replaced.get(key, row) for key, row in self.table.rows.items())

    async def get(self, workspace_id: str) -> WorkspaceRecord | None:
        self.core.check_open()
        row = self.table.rows.get(workspace_id)
        return None if row is None else clone(row)

    async def list(
        self,
        *,
        project_id: str | None = None,
        include_archived: bool = False,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[WorkspaceRecord]:
        def keep(row: WorkspaceRecord) -> bool:
            return (
                (include_archived or row.archivedAt is None)
                and (project_id is None or row.projectId == project_id)
                and (cwd is None or row.cwd == cwd)
            )

        return _ordered_page(
            self.core, table=self.table, cursor=cursor, limit=limit, keep=keep, kind="workspaces"
        )

    async def write_file(self, data: bytes) -> None:
        await self.core.io(
            lambda: self.core.ops.write_bytes(self.path, data), f"writing {self.path}"
        )

    async def insert(self, record: WorkspaceRecord) -> bool:
        row, _encoded = revalidated(WorkspaceRecord, record)

        async def operation() -> bool:
            async with self.lock:
                self.core.check_certain()
                if row.workspaceId in self.table.rows:
                    return False
                await self.write_file(encode_rows([*self.table.rows.values(), row]))
                self.table.append(row)
                return True

        return await self.core.write(operation)

    async def update(
        self, workspace_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> WorkspaceRecord:
        async def operation() -> WorkspaceRecord:
            async with self.lock:
                self.core.check_certain()
                current = self.table.rows.get(workspace_id)
                if current is None:
                    raise NotFound(f"workspace {workspace_id} not found")
                check_expect(current, expect)
                row, _encoded = with_changes(WorkspaceRecord, current, changes, "workspaceId")
                await self.write_file(self.encoded_with({workspace_id: row}))
                self.table.replace(row)
                return clone(row)

        return await self.core.write(operation)

    async def delete(self, workspace_id: str) -> bool:
        async def operation() -> bool:
            async with self.lock:
                self.core.check_certain()
                if workspace_id not in self.table.rows:
                    return False
                await self.write_file(
                    encode_rows(row for key, row in self.table.rows.items() if key != workspace_id)
                )
                self.table.pop(workspace_id)
                return True

        return await self.core.write(operation)


class JsonPushTokenRepository(PushTokenRepository):
    """``push-tokens.json``: ``{"tokens": [...]}``, unknown top-level fields kept."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.file = PushTokensFile()
        self.lock = asyncio.Lock()

    async def list(self) -> builtins.list[str]:
        self.core.check_open()
        return list(self.file.tokens)

    async def _replace(self, tokens: builtins.list[str]) -> None:
        data = dump_record(self.file)
        data["tokens"] = tokens
        new, encoded = validated(PushTokensFile, data)
        path = self.core.home / PUSH_TOKENS_FILE
        await self.core.io(lambda: self.core.ops.write_bytes(path, encoded), f"writing {path}")
        self.file = new

    async def add(self, token: str) -> bool:
        if not isinstance(token, str) or not token:
            raise InvalidParams("a push token is a non-empty string")

        async def operation() -> bool:
            async with self.lock:
                if token in self.file.tokens:
                    return False
                await self._replace([*self.file.tokens, token])
                return True

        return await self.core.write(operation)

    async def remove(self, token: str) -> bool:
        async def operation() -> bool:
            async with self.lock:
                if token not in self.file.tokens:
                    return False
                await self._replace([t for t in self.file.tokens if t != token])
                return True

        return await self.core.write(operation)


class JsonPluginSourceRepository(PluginSourceRepository):
    """``plugins/sources.json``: plugin id to acquisition source."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.sources: dict[str, PluginSourceRecord] = {}
        self.lock = asyncio.Lock()

    async def get(self, plugin_id: str) -> PluginSourceRecord | None:
        self.core.check_open()
        source = self.sources.get(plugin_id)
        return None if source is None else clone(source)

    async def list(self) -> dict[str, PluginSourceRecord]:
        self.core.check_open()
        return {key: clone(value) for key, value in self.sources.items()}

    async def _write(self, sources: dict[str, PluginSourceRecord]) -> None:
        data = encode_json({key: dump_record(value) for key, value in sources.items()})
        path = self.core.home / PLUGIN_SOURCES_FILE
        await self.core.io(lambda: self.core.ops.write_bytes(path, data), f"writing {path}")
        self.sources = sources

    async def put(self, plugin_id: str, record: PluginSourceRecord) -> None:
        if not isinstance(plugin_id, str) or not plugin_id:
            raise InvalidParams("a plugin id is a non-empty string")
        if not isinstance(record, BaseModel):
            raise InvalidParams(f"expected a plugin source, got {type(record).__name__}")
        try:
            source = _PLUGIN_SOURCE.validate_json(encode_json(dump_record(record)))
        except ValidationError as exc:
            raise InvalidParams(f"invalid plugin source: {exc}") from exc

        async def operation() -> None:
            async with self.lock:
                await self._write({**self.sources, plugin_id: source})

        await self.core.write(operation)

    async def delete(self, plugin_id: str) -> bool:
        async def operation() -> bool:
            async with self.lock:
                if plugin_id not in self.sources:
                    return False
                await self._write({k: v for k, v in self.sources.items() if k != plugin_id})
                return True

        return await self.core.write(operation)


__all__ = [
    "JsonAgentRepository",
    "JsonManagedProcessRepository",
    "JsonPluginSourceRepository",
    "JsonProjectRepository",
    "JsonPushTokenRepository",
    "JsonScheduleRepository",
    "JsonWorkspaceRepository",
    "RecordFiles",
]
