"""Repositories over one file per record: agents, schedules and managed processes.

:class:`RecordFiles` is what they share: the compact in-memory index of one record kind (see
:mod:`paseo_store_json._index`), the bounded cache of full records, the on-demand read of a
record's file and the per-id locked write of its files.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Set
from pathlib import Path
from typing import Any, Generic, TypeVar

from paseo_hookspecs.errors import NotFound, StorageError, Unavailable
from paseo_hookspecs.records import (
    AgentRecord,
    agent_record_path,
)
from paseo_hookspecs.store import (
    DEFAULT_PAGE_SIZE,
    AgentFilter,
    AgentRepository,
    Changes,
    Expect,
    Page,
)
from pydantic import BaseModel, ValidationError

from paseo_store_json._core import (
    Core,
    KeyedLocks,
    check_expect,
    check_file_id,
    check_limit,
    clone,
    decode_cursor,
    describe_validation_error,
    encode_cursor,
    revalidated,
    with_changes,
)
from paseo_store_json._files import quarantine
from paseo_store_json._index import (
    DEFAULT_CACHE_RECORDS,
    AgentRow,
    Facet,
    RecordCache,
    Row,
    SortedIndex,
    agent_candidates,
    agent_facets,
)

log = logging.getLogger("paseo.store.json")

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R", bound=Row)


class _Damaged:
    """A record file that could not be read back: why, and whether it is gone or unreadable."""

    def __init__(self, reason: str, *, missing: bool) -> None:
        self.reason = reason
        self.missing = missing


def _read_record(model: type[M], path: str) -> M | _Damaged:
    """The record in ``path`` (blocking); ``OSError`` other than a missing file propagates."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return _Damaged("the file is gone", missing=True)
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        return _Damaged(describe_validation_error(exc), missing=False)


class RecordFiles(Generic[M, R]):
    """A collection stored as one JSON file per record, indexed in memory.

    Memory holds an index row per record (``row_type``) and at most ``cache_records`` full
    records; a full record not in the cache is read from its file (in a worker thread). A
    file found damaged on such a read (changed behind the store's back) is quarantined as at
    open and its record dropped from the index, never served half-read.

    Writes for one id are serialized by a per-id lock; different ids write in parallel. A
    record whose path changes (an agent whose cwd moved) is written at the new path first and
    the old file removed after, so a crash in between leaves two files that the next open
    resolves in favour of the canonical one.

    **An index being checked.** The agents' index is loaded from the durable index file at open
    and checked against the records in the background (:mod:`paseo_store_json._keeper`). Until
    :meth:`settle`, :attr:`verified` is false: an id the index lacks is looked for on disk
    (``finder``), so ``get`` and writes are never wrong; the ids written meanwhile are kept in
    :attr:`touched`, as the check's walk may have read them before the write.
    """

    def __init__(
        self,
        core: Core,
        model: type[M],
        kind: str,
        relative_path: Callable[[M], Any],
        *,
        row_type: Callable[[M, str], R],
        cache_records: int = DEFAULT_CACHE_RECORDS,
        facets: Callable[[R], tuple[Facet, ...]] | None = None,
    ) -> None:
        self.core = core
        self.model = model
        self.kind = kind
        self._relative_path = relative_path
        self._row_type = row_type
        self.index: SortedIndex[R] = SortedIndex(facets)
        self.cache: RecordCache[M] = RecordCache(cache_records)
        self.locks = KeyedLocks()
        self._facets = facets
        self.verified = True
        """Whether the index holds exactly the records on disk (see the class docstring)."""
        self.touched: set[str] = set()
        self.failure: str | None = None
        """Why the last check of the index failed (listings then raise ``StorageError``)."""
        self.wait_check: Callable[[], Awaitable[None]] | None = None
        """Waits for the running check (while unverified)."""
        self.finder: Callable[[str], tuple[M, str] | None] | None = None
        """Blocking: the record of an id and its file, looked for on disk (while unverified)."""
        self.changed: Callable[[], None] = lambda: None
        """Called after each change of the index (the durable index is then rewritten)."""

    def load(self, rows: Mapping[str, R]) -> None:
        self.index.load(rows.values())

    def add_rows(self, rows: Mapping[str, R]) -> None:
        """Add the rows of the durable index behind those held: a row held (loaded at open,
        found on disk or written since) wins, and an id deleted since open stays deleted."""
        held = self.index.rows
        merged = dict(rows)
        for row_id in self.touched:
            if row_id not in held:
                merged.pop(row_id, None)
        merged.update(held)
        self.index = SortedIndex(self._facets)
        self.index.load(merged.values())

    def unverify(self) -> None:
        """The index is not known to hold every record: a check has to settle it."""
        self.verified = False
        self.touched = set()

    def settle(self, changes: Mapping[str, R | None], *, bulk: int = 256) -> None:
        """The check is done: ``changes`` (id -> the row the records give, ``None`` for a row
        to drop) are what disagreed with the index as it stood when the check began; those of
        ids written meanwhile are stale and skipped. Many changes (a first build) rebuild the
        index in one sort instead of one insertion each."""
        wanted = {key: row for key, row in changes.items() if key not in self.touched}
        if len(wanted) > bulk:
            rows = dict(self.index.rows)
            for key, row in wanted.items():
                if row is None:
                    rows.pop(key, None)
                else:
                    rows[key] = row
            self.index = SortedIndex(self._facets)
            self.index.load(rows.values())
        else:
            for key, row in wanted.items():
                if row is None:
                    self.index.pop(key)
                else:
                    self.index.put(row)
        for key in wanted:
            self.cache.drop(key)
        self.verified = True
        self.failure = None
        self.touched = set()
        if wanted:
            self.changed()

    async def settled(self) -> None:
        """Return once the index holds every record; ``StorageError`` while it cannot be
        checked (the check is retried), ``Unavailable`` when the store closes first."""
        while not self.verified:
            if self.failure is not None:
                raise StorageError(f"the {self.kind} index could not be checked: {self.failure}")
            if self.wait_check is None:
                raise Unavailable(f"the {self.kind} index is not being checked")
            await self.wait_check()
            self.core.check_open()
        if self.wait_check is not None:
            # Settled, and what the check does after (the index file's write) is done too.
            await self.wait_check()

    def _wrote(self, row_id: str) -> None:
        if not self.verified:
            self.touched.add(row_id)
        self.changed()

    async def row_of(self, row_id: str) -> R | None:
        """The index row of ``row_id``; while the index is being checked, one it lacks is
        looked for on disk and indexed (unless written or deleted since open)."""
        row = self.index.rows.get(row_id)
        if row is not None or self.verified or self.finder is None or row_id in self.touched:
            return row
        finder = self.finder
        found = await self.core.io(lambda: finder(row_id), f"looking for {self.kind} {row_id}")
        if found is None:
            return None
        record, path = found
        row = self.index.rows.get(row_id)
        if row is not None or self.verified or row_id in self.touched:
            return row
        row = self._row_type(record, path)
        self.index.put(row)
        self.cache.put(row_id, record)
        self.changed()
        return row

    def path_for(self, row: M) -> Path:
        return Path(self.core.home / self._relative_path(row))

    async def full(self, row_id: str, *, locked: bool = False) -> M | None:
        """The cached record (not a copy: callers clone before handing it out), read from its
        file on a miss; ``None`` when unknown. ``locked``: the caller holds ``row_id``'s lock."""
        cached = self.cache.get(row_id)
        if cached is not None:
            return cached
        row = await self.row_of(row_id)
        if row is None:
            return None
        cached = self.cache.get(row_id)
        if cached is not None:
            return cached
        path = row.path
        found = await self.core.io(
            lambda: _read_record(self.model, path), f"reading {self.kind} {row_id} ({path})"
        )
        if isinstance(found, _Damaged):
            await self._drop_damaged(row, found, locked=locked)
            return None
        # A write published meanwhile replaced the row: what was read may be older than it.
        if self.index.rows.get(row_id) is row:
            self.cache.put(row_id, found)
            return found
        return await self.full(row_id, locked=locked)

    async def _drop_damaged(self, row: R, damage: _Damaged, *, locked: bool) -> None:
        """Quarantine (or forget, when it is gone) a file that failed to read back, unless a
        write replaced it meanwhile. Under the id's lock, so no write of it runs meanwhile;
        the index changes on the event loop, never in the worker thread."""

        async def settle() -> None:
            if self.index.rows.get(row.id) is not row:
                return
            if damage.missing:
                log.error("%s %s vanished from %s: dropped", self.kind, row.id, row.path)
            else:
                moved = await self.core.io(
                    lambda: quarantine(self.core.home, Path(row.path), damage.reason),
                    f"quarantining {row.path}",
                )
                self.core.quarantined.append(moved)
            self.index.pop(row.id)
            self.cache.drop(row.id)
            self.changed()

        if locked:
            await settle()
            return
        async with self.locks.hold(row.id):
            await settle()

    async def get(self, row_id: str) -> M | None:
        self.core.check_open()
        row = await self.full(row_id)
        return None if row is None else clone(row)

    async def insert(self, record: M) -> bool:
        row, encoded = revalidated(self.model, record)
        row_id = str(row.id)  # type: ignore[attr-defined]
        check_file_id(self.kind, row_id)

        async def operation() -> bool:
            async with self.locks.hold(row_id):
                if await self.row_of(row_id) is not None:
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
                current = await self.full(row_id, locked=True)
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
        """Write ``row`` durably, then publish it to the index and the cache."""
        row_id = str(row.id)  # type: ignore[attr-defined]
        path = self.path_for(row)
        old = self.index.rows.get(row_id)
        old_path = None if old is None else Path(old.path)
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
        self.index.put(self._row_type(row, str(path)))
        self.cache.put(row_id, row)
        self._wrote(row_id)

    def forget(self, row_id: str) -> None:
        """Drop ``row_id`` from the index (its record is gone), as a write of it."""
        self.index.pop(row_id)
        self.cache.drop(row_id)
        self._wrote(row_id)

    async def delete(self, row_id: str, after: Callable[[], Any] | None = None) -> bool:
        async def operation() -> bool:
            async with self.locks.hold(row_id):
                stored = await self.row_of(row_id)
                if stored is None:
                    return False
                path = Path(stored.path)
                await self.core.io(
                    lambda: self.core.ops.remove(path), f"deleting {self.kind} {row_id} ({path})"
                )
                self.forget(row_id)
                if after is not None:
                    await after()
                return True

        return await self.core.write(operation)

    async def page(
        self,
        cursor: str | None,
        limit: int,
        keep: Callable[[R], bool],
        cursor_kind: str,
        *,
        descending: bool = False,
        among: Callable[[], Set[str] | None] = lambda: None,
    ) -> Page[M]:
        """A page of the rows ``keep`` admits; their full records are read together.
        ``among``: the ids (a superset of those ``keep`` admits) to walk instead of every row,
        or ``None``; asked again for each pass, as rows may change between passes."""
        self.core.check_open()
        size = check_limit(limit)
        start = None if cursor is None else decode_cursor(cursor, cursor_kind, (str, str))
        # Taken first: a check settling while the records are read did not vouch for the rows
        # this page was chosen from.
        partial = not self.verified
        items: list[M] = []
        while True:
            # One row beyond what the page still needs tells whether another page follows.
            need = size - len(items)
            batch: list[tuple[tuple[str, str], R]] = []
            for key, row in self.index.walk(start, descending=descending, among=among()):
                if keep(row):
                    batch.append((key, row))
                    if len(batch) > need:
                        break
            chosen = batch[:need]
            read = await self.read_rows([row for _key, row in chosen])
            items += read
            if len(read) == len(chosen):
                more = len(batch) > need
                return Page(
                    items,
                    encode_cursor(cursor_kind, *chosen[-1][0]) if more else None,
                    partial=partial,
                )
            # A record among them was damaged and dropped: fill the page from the rows after.
            start = chosen[-1][0]

    async def read_rows(self, rows: list[R]) -> list[M]:
        """Private copies of ``rows``' records: cached ones cloned, the others read from their
        files in one worker-thread pass (and not cached: a listing would flush the cache)."""
        cached = {row.id: self.cache.get(row.id) for row in rows}
        missing = [row for row in rows if cached[row.id] is None]

        def read_all() -> list[M | _Damaged]:
            return [_read_record(self.model, row.path) for row in missing]

        found = dict(
            zip(
                (row.id for row in missing),
                await self.core.io(read_all, f"reading {len(missing)} {self.kind} records")
                if missing
                else [],
                strict=True,
            )
        )
        records: list[M] = []
        for row in rows:
            hit = cached[row.id]
            if hit is not None:
                records.append(clone(hit))
                continue
            value = found[row.id]
            if isinstance(value, _Damaged):
                await self._drop_damaged(row, value, locked=False)
                continue
            if self.index.rows.get(row.id) is not row:
                # Rewritten while it was read: serve what is current.
                current = await self.full(row.id)
                if current is None:
                    continue
                value = clone(current)
            records.append(value)
        return records


# --- agents ----------------------------------------------------------------------------------

_EVERY_AGENT = AgentFilter()


class JsonAgentRepository(AgentRepository):
    """Agents in ``agents/{sanitized-cwd}/{agentId}.json``."""

    def __init__(
        self,
        core: Core,
        timeline_delete: Callable[[str], Any],
        cache_records: int = DEFAULT_CACHE_RECORDS,
    ) -> None:
        self.files: RecordFiles[AgentRecord, AgentRow] = RecordFiles(
            core,
            AgentRecord,
            "agent",
            lambda row: agent_record_path(row.id, row.cwd),
            row_type=AgentRow,
            cache_records=cache_records,
            facets=agent_facets,
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
        newest_first: bool = False,
    ) -> Page[AgentRecord]:
        self.files.core.check_open()
        while True:
            await self.files.settled()
            page = await self.list_now(
                filter, cursor=cursor, limit=limit, newest_first=newest_first
            )
            # A check that began again meanwhile (a reopen does not: a new store) is waited for.
            if not page.partial:
                return page

    async def list_now(
        self,
        filter: AgentFilter = _EVERY_AGENT,
        *,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        newest_first: bool = False,
    ) -> Page[AgentRecord]:
        return await self.files.page(
            cursor,
            limit,
            lambda row: row.matches(filter),
            "agents",
            descending=newest_first,
            among=lambda: agent_candidates(self.files.index, filter),
        )

    async def settled(self) -> None:
        self.files.core.check_open()
        await self.files.settled()

    async def count(self, filter: AgentFilter = _EVERY_AGENT) -> int:
        self.files.core.check_open()
        await self.files.settled()
        return await self.count_now(filter)

    async def count_now(self, filter: AgentFilter = _EVERY_AGENT) -> int:
        self.files.core.check_open()
        rows = self.files.index.rows
        among = agent_candidates(self.files.index, filter)
        counted = rows.values() if among is None else (rows[i] for i in among if i in rows)
        return sum(1 for row in counted if row.matches(filter))

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


__all__ = [
    "JsonAgentRepository",
    "RecordFiles",
]
