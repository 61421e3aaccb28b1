"""The project and workspace registries and the workspace-label catalog.

Both registries list in insertion order (an ``AUTOINCREMENT`` position, never reused, so a cursor
naming a deleted row still orders correctly). A workspace keeps its label assignments inside its
own record, as the JSON layout does; a label rename or delete rewrites the catalog row and every
affected workspace record in one transaction, so there is no separate compound-commit file to
recover. Should that transaction's outcome ever be unknowable (neither commit nor rollback
confirmed), workspace and label writes freeze until the store is reopened.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from paseo_hookspecs.errors import (
    Conflict,
    InvalidParams,
    NotFound,
    WorkspaceLabelStorageUncertain,
)
from paseo_hookspecs.records import (
    WORKSPACE_LABEL_COLORS,
    ProjectRecord,
    WorkspaceLabelDefinition,
    WorkspaceRecord,
    label_identity,
    normalize_label_name,
)
from paseo_hookspecs.store import (
    DEFAULT_PAGE_SIZE,
    Changes,
    Expect,
    LabelRepository,
    Page,
    ProjectRepository,
    WorkspaceRepository,
)
from pydantic import BaseModel

from paseo_store_sqlite._codec import (
    apply_changes,
    check_expect,
    check_limit,
    checked_text,
    decode_cursor,
    encode_cursor,
    record_text,
    validate,
)
from paseo_store_sqlite._database import CommitUncertain, Database
from paseo_store_sqlite._rows import load_current, parse, read_one

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


async def _position_page(
    db: Database,
    table: str,
    model: type[R],
    *,
    clauses: list[str],
    params: list[Any],
    cursor: str | None,
    limit: int,
) -> Page[R]:
    """One keyset page of ``table`` (``projects`` or ``workspaces``) in insertion order,
    filtered by ``clauses``; the cursor is the last row's position."""
    if cursor is not None:
        clauses.append("position > ?")
        params.extend(decode_cursor(table, cursor, (int,)))
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    # ``table`` is one of two constants and every value is a bound parameter.
    sql = f"SELECT position, record FROM {table} {where} ORDER BY position LIMIT ?"  # noqa: S608
    params.append(limit + 1)

    def run(conn: sqlite3.Connection) -> list[tuple[int, R]]:
        rows = conn.execute(sql, params).fetchall()
        return [(row[0], parse(model, row[1])) for row in rows]

    rows = await db.read(run)
    if len(rows) <= limit:
        return Page([item for _, item in rows])
    rows = rows[:limit]
    return Page([item for _, item in rows], encode_cursor(table, (rows[-1][0],)))


class SqliteProjectRepository(ProjectRepository):
    """Projects in insertion order.

    Active-root uniqueness is enforced by :meth:`insert_if_root_free` inside its write
    transaction rather than by a unique index: legacy registries may hold several active projects
    with the same root, and those records must stay loadable (and migratable) unchanged.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, project_id: str) -> ProjectRecord | None:
        return await read_one(
            self._db,
            "SELECT record FROM projects WHERE project_id = ?",
            project_id,
            functools.partial(parse, ProjectRecord),
        )

    async def list(
        self,
        *,
        include_archived: bool = False,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[ProjectRecord]:
        limit = check_limit(limit)
        clauses: list[str] = []
        params: list[Any] = []
        if not include_archived:
            clauses.append("archived = 0")
        return await _position_page(
            self._db,
            "projects",
            ProjectRecord,
            clauses=clauses,
            params=params,
            cursor=cursor,
            limit=limit,
        )

    async def insert_if_root_free(self, record: ProjectRecord) -> tuple[ProjectRecord, bool]:
        def run(conn: sqlite3.Connection) -> tuple[ProjectRecord, bool]:
            text = checked_text(ProjectRecord, record)
            row = conn.execute(
                "SELECT record FROM projects WHERE root_path = ? AND archived = 0 "
                "ORDER BY position LIMIT 1",
                (record.rootPath,),
            ).fetchone()
            if row is not None:
                return parse(ProjectRecord, row[0]), False
            taken = conn.execute(
                "SELECT 1 FROM projects WHERE project_id = ?", (record.projectId,)
            ).fetchone()
            if taken is not None:
                raise Conflict(
                    f"a project with id {record.projectId!r} exists",
                    data={"projectId": record.projectId},
                )
            conn.execute(
                "INSERT INTO projects (project_id, root_path, archived, record) "
                "VALUES (?, ?, ?, ?)",
                (
                    record.projectId,
                    record.rootPath,
                    int(record.archivedAt is not None),
                    text,
                ),
            )
            return parse(ProjectRecord, text), True

        return await self._db.write(run)

    async def update(
        self, project_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> ProjectRecord:
        def run(conn: sqlite3.Connection) -> ProjectRecord:
            current = load_current(
                conn, "SELECT record FROM projects WHERE project_id = ?", project_id, "project"
            )
            check_expect(current, expect)
            updated = apply_changes(ProjectRecord, current, changes, key_field="projectId")
            conn.execute(
                "UPDATE projects SET root_path = ?, archived = ?, record = ? WHERE project_id = ?",
                (
                    updated.rootPath,
                    int(updated.archivedAt is not None),
                    record_text(updated),
                    project_id,
                ),
            )
            return updated

        return await self._db.write(run)

    async def delete(self, project_id: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute("DELETE FROM projects WHERE project_id = ?", (project_id,)).rowcount
            )

        return await self._db.write(run)


class LabelStorageGuard:
    """Whether workspace and label writes are frozen after an unknowable label commit."""

    def __init__(self) -> None:
        self.uncertain = False

    def check(self) -> None:
        """Raise ``WorkspaceLabelStorageUncertain`` while frozen."""
        if self.uncertain:
            raise WorkspaceLabelStorageUncertain(
                "workspace label storage is uncertain after a failed commit; "
                "restart the daemon to recover"
            )


def _store_workspace(conn: sqlite3.Connection, record: WorkspaceRecord) -> None:
    conn.execute(
        "UPDATE workspaces SET project_id = ?, cwd = ?, archived = ?, record = ? "
        "WHERE workspace_id = ?",
        (
            record.projectId,
            record.cwd,
            int(record.archivedAt is not None),
            record_text(record),
            record.workspaceId,
        ),
    )


def _with_labels(current: dict[str, Any], labels: list[str], now: str) -> WorkspaceRecord:
    return validate(WorkspaceRecord, {**current, "labels": labels, "updatedAt": now})


def _rewrite_assignments(
    conn: sqlite3.Connection, rewrite: Callable[[list[str]], list[str]], now: str
) -> None:
    """Apply ``rewrite`` to every labelled workspace's labels, stamping changed ones."""
    rows = conn.execute(
        "SELECT record FROM workspaces WHERE json_type(record, '$.labels') = 'array'"
    ).fetchall()
    for (text,) in rows:
        current = json.loads(text)
        labels = list(current["labels"])
        rewritten = rewrite(labels)
        if rewritten != labels:
            _store_workspace(conn, _with_labels(current, rewritten, now))


class SqliteWorkspaceRepository(WorkspaceRepository):
    """Workspaces in insertion order, their label assignments inside each record."""

    def __init__(self, db: Database, guard: LabelStorageGuard) -> None:
        self._db = db
        self._guard = guard

    async def get(self, workspace_id: str) -> WorkspaceRecord | None:
        return await read_one(
            self._db,
            "SELECT record FROM workspaces WHERE workspace_id = ?",
            workspace_id,
            functools.partial(parse, WorkspaceRecord),
        )

    async def list(
        self,
        *,
        project_id: str | None = None,
        include_archived: bool = False,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[WorkspaceRecord]:
        limit = check_limit(limit)
        clauses: list[str] = []
        params: list[Any] = []
        if project_id is not None:
            clauses.append("project_id = ?")
            params.append(project_id)
        if not include_archived:
            clauses.append("archived = 0")
        if cwd is not None:
            clauses.append("cwd = ?")
            params.append(cwd)
        return await _position_page(
            self._db,
            "workspaces",
            WorkspaceRecord,
            clauses=clauses,
            params=params,
            cursor=cursor,
            limit=limit,
        )

    async def insert(self, record: WorkspaceRecord) -> bool:
        self._guard.check()

        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute(
                    "INSERT INTO workspaces (workspace_id, project_id, cwd, archived, record) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (workspace_id) DO NOTHING",
                    (
                        record.workspaceId,
                        record.projectId,
                        record.cwd,
                        int(record.archivedAt is not None),
                        checked_text(WorkspaceRecord, record),
                    ),
                ).rowcount
            )

        return await self._db.write(run)

    async def update(
        self, workspace_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> WorkspaceRecord:
        self._guard.check()

        def run(conn: sqlite3.Connection) -> WorkspaceRecord:
            current = load_current(
                conn,
                "SELECT record FROM workspaces WHERE workspace_id = ?",
                workspace_id,
                "workspace",
            )
            check_expect(current, expect)
            updated = apply_changes(WorkspaceRecord, current, changes, key_field="workspaceId")
            _store_workspace(conn, updated)
            return updated

        return await self._db.write(run)

    async def delete(self, workspace_id: str) -> bool:
        self._guard.check()

        def run(conn: sqlite3.Connection) -> bool:
            return bool(
                conn.execute(
                    "DELETE FROM workspaces WHERE workspace_id = ?", (workspace_id,)
                ).rowcount
            )

        return await self._db.write(run)


def _checked_name(name: object) -> str:
    if not isinstance(name, str) or not normalize_label_name(name):
        raise InvalidParams("a label name is a non-empty string")
    return normalize_label_name(name)


def _checked_color(color: object) -> str:
    if color not in WORKSPACE_LABEL_COLORS:
        raise InvalidParams(
            f"unknown label colour {color!r} (one of {', '.join(WORKSPACE_LABEL_COLORS)})"
        )
    return str(color)


class SqliteLabelRepository(LabelRepository):
    """The label catalog in display (insertion) order, unique by identity."""

    def __init__(self, db: Database, guard: LabelStorageGuard) -> None:
        self._db = db
        self._guard = guard

    async def _label_write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        self._guard.check()
        try:
            return await self._db.write(fn)
        except CommitUncertain as exc:
            self._guard.uncertain = True
            raise WorkspaceLabelStorageUncertain(exc.message) from exc

    async def list(self) -> list[WorkspaceLabelDefinition]:
        def run(conn: sqlite3.Connection) -> list[WorkspaceLabelDefinition]:
            rows = conn.execute("SELECT record FROM workspace_labels ORDER BY position").fetchall()
            return [parse(WorkspaceLabelDefinition, row[0]) for row in rows]

        return await self._db.read(run)

    async def create(self, name: str, color: str) -> WorkspaceLabelDefinition:
        definition = validate(
            WorkspaceLabelDefinition, {"name": _checked_name(name), "color": _checked_color(color)}
        )
        identity = label_identity(definition.name)

        def run(conn: sqlite3.Connection) -> WorkspaceLabelDefinition:
            inserted = conn.execute(
                "INSERT INTO workspace_labels (identity, record) VALUES (?, ?) "
                "ON CONFLICT (identity) DO NOTHING",
                (identity, record_text(definition)),
            ).rowcount
            if not inserted:
                raise Conflict(f"a label named {definition.name!r} exists", data={"name": name})
            return definition

        return await self._label_write(run)

    async def edit(
        self, name: str, *, new_name: str | None = None, color: str | None = None, now: str
    ) -> WorkspaceLabelDefinition:
        identity = label_identity(name)
        renamed = None if new_name is None else _checked_name(new_name)
        if color is not None:
            _checked_color(color)

        def run(conn: sqlite3.Connection) -> WorkspaceLabelDefinition:
            row = conn.execute(
                "SELECT record FROM workspace_labels WHERE identity = ?", (identity,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no label named {name!r}", data={"name": name})
            data = json.loads(row[0])
            new_identity = identity
            if renamed is not None:
                new_identity = label_identity(renamed)
                if new_identity != identity:
                    clash = conn.execute(
                        "SELECT 1 FROM workspace_labels WHERE identity = ?", (new_identity,)
                    ).fetchone()
                    if clash is not None:
                        raise Conflict(f"a label named {renamed!r} exists", data={"name": renamed})
                data["name"] = renamed
            if color is not None:
                data["color"] = color
            definition = validate(WorkspaceLabelDefinition, data)
            conn.execute(
                "UPDATE workspace_labels SET identity = ?, record = ? WHERE identity = ?",
                (new_identity, record_text(definition), identity),
            )
            if renamed is not None:

                def rename(labels: list[str]) -> list[str]:
                    # Renamed in place; a label the workspace already held under the new
                    # identity is not repeated.
                    result: list[str] = []
                    seen: set[str] = set()
                    for label in labels:
                        target = renamed if label_identity(label) == identity else label
                        if label_identity(target) not in seen:
                            seen.add(label_identity(target))
                            result.append(target)
                    return result

                _rewrite_assignments(conn, rename, now)
            return definition

        return await self._label_write(run)

    async def delete(self, name: str, *, now: str) -> bool:
        identity = label_identity(name)

        def run(conn: sqlite3.Connection) -> bool:
            deleted = conn.execute(
                "DELETE FROM workspace_labels WHERE identity = ?", (identity,)
            ).rowcount
            if deleted:
                _rewrite_assignments(
                    conn,
                    lambda labels: [lb for lb in labels if label_identity(lb) != identity],
                    now,
                )
            return bool(deleted)

        return await self._label_write(run)

    async def assign(self, workspace_id: str, names: Sequence[str], *, now: str) -> WorkspaceRecord:
        # No label has the empty identity, so a name that is not a string is NotFound.
        identities = [label_identity(name) if isinstance(name, str) else "" for name in names]

        def run(conn: sqlite3.Connection) -> WorkspaceRecord:
            current = load_current(
                conn,
                "SELECT record FROM workspaces WHERE workspace_id = ?",
                workspace_id,
                "workspace",
            )
            labels = list(current.get("labels") or [])
            present = {label_identity(label) for label in labels}
            for name, identity in zip(names, identities, strict=True):
                row = conn.execute(
                    "SELECT record FROM workspace_labels WHERE identity = ?", (identity,)
                ).fetchone()
                if row is None:
                    raise NotFound(f"no label named {name!r}", data={"name": name})
                if identity not in present:
                    labels.append(parse(WorkspaceLabelDefinition, row[0]).name)
                    present.add(identity)
            if labels == list(current.get("labels") or []):
                return validate(WorkspaceRecord, current)
            updated = _with_labels(current, labels, now)
            _store_workspace(conn, updated)
            return updated

        return await self._label_write(run)

    async def unassign(
        self, workspace_id: str, names: Sequence[str], *, now: str
    ) -> WorkspaceRecord:
        removed = {label_identity(name) for name in names if isinstance(name, str)}

        def run(conn: sqlite3.Connection) -> WorkspaceRecord:
            current = load_current(
                conn,
                "SELECT record FROM workspaces WHERE workspace_id = ?",
                workspace_id,
                "workspace",
            )
            labels = list(current.get("labels") or [])
            kept = [label for label in labels if label_identity(label) not in removed]
            if kept == labels:
                return validate(WorkspaceRecord, current)
            updated = _with_labels(current, kept, now)
            _store_workspace(conn, updated)
            return updated

        return await self._label_write(run)
