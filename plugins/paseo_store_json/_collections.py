"""Repositories over small whole-file collections: projects, workspaces, push tokens and
plugin sources. Each mutation rewrites its collection's one file."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.records import (
    PLUGIN_SOURCES_FILE,
    PROJECTS_FILE,
    PUSH_TOKENS_FILE,
    WORKSPACES_FILE,
    PluginSource,
    PluginSourceRecord,
    ProjectRecord,
    PushTokensFile,
    WorkspaceRecord,
    dump_record,
)
from paseo_hookspecs.store import (
    DEFAULT_PAGE_SIZE,
    Changes,
    Expect,
    Page,
    PluginSourceRepository,
    ProjectRepository,
    PushTokenRepository,
    WorkspaceRepository,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

from paseo_store_json._core import (
    Core,
    OrderedTable,
    check_expect,
    check_limit,
    clone,
    decode_cursor,
    encode_cursor,
    revalidated,
    validated,
    with_changes,
)
from paseo_store_json._files import encode_json

M = TypeVar("M", bound=BaseModel)

_PLUGIN_SOURCE = TypeAdapter[Any](PluginSource)


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
    "JsonPluginSourceRepository",
    "JsonProjectRepository",
    "JsonPushTokenRepository",
    "JsonWorkspaceRepository",
]
