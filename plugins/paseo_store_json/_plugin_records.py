"""Plugins' records (:mod:`paseo_hookspecs.plugin_records`) as one file per record.

``$PASEO_HOME/plugin-records/<namespace>/<collection>/<id>.json`` holds
``{"id", "revision", "updated", "value"}``, written atomically (temporary file, fsync, rename,
directory fsync) with mode 0600 from creation: a plugin's records may hold what it was told
in confidence (a loop's prompt), and the store cannot tell. Plugin data lives under its own
root, which the store alone writes: never beside the kernel's directories (no plugin id can
collide with ``agents/``), nor in ``plugin-data/<plugin id>/``, where plugins keep files of
their own that a scan of this root must never quarantine.

Memory: a collection is indexed on first use (id → revision), never its values: a get or a
page reads its files. Opening the store only sweeps the temporary files of interrupted writes;
a damaged file is quarantined when its collection is first used. Writes to one collection are
serialised by one lock and run to the end even when their caller is cancelled, so they land in
call order.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import logging
import os
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs.atomic import atomic_write_bytes, fsync_directory, sweep_temp_files
from paseo_hookspecs.errors import Conflict, StorageError
from paseo_hookspecs.plugin_records import (
    PluginRecord,
    PluginRecordRepository,
    PluginRecordStore,
    check_expect,
    check_id,
    check_name,
    clamp_limit,
    decode_cursor,
    decode_value,
    encode_cursor,
    encode_value,
)
from paseo_hookspecs.store import DEFAULT_PAGE_SIZE, Page

from paseo_store_json._files import ensure_directory, quarantine

log = logging.getLogger("paseo.store.json")

T = TypeVar("T")

ROOT = "plugin-records"
"""The directory under ``$PASEO_HOME`` holding every plugin's records."""
SUFFIX = ".json"
MODE = 0o600


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Index:
    revisions: dict[str, int]
    ids: list[str]
    """Sorted: a page is a bisect away."""


class JsonPluginRecordRepository(PluginRecordRepository):
    def __init__(
        self, home: Path, namespace: str, collection: str, writes: set[asyncio.Future[Any]]
    ) -> None:
        self.namespace = namespace
        self.collection = collection
        self._home = home
        self.directory = home / ROOT / namespace / collection
        self._lock = asyncio.Lock()
        self._index: _Index | None = None
        self._writes = writes

    # -- reads -----------------------------------------------------------------------------

    async def get(self, record_id: str) -> PluginRecord | None:
        check_id(record_id)
        async with self._lock:
            index = await self._loaded()
            if record_id not in index.revisions:
                return None
            return await asyncio.to_thread(self._read, record_id)

    async def list(
        self, *, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> Page[PluginRecord]:
        after = decode_cursor(cursor)
        limit = clamp_limit(limit)
        async with self._lock:
            index = await self._loaded()
            start = 0 if after is None else bisect.bisect_right(index.ids, after)
            ids = index.ids[start : start + limit + 1]
            more = len(ids) > limit
            ids = ids[:limit]
            items = await asyncio.to_thread(lambda: [self._read(i) for i in ids])
        rows = [item for item in items if item is not None]
        return Page(rows, encode_cursor(ids[-1]) if more and ids else None)

    # -- writes ----------------------------------------------------------------------------

    async def put(
        self, record_id: str, value: Mapping[str, Any], *, expect_revision: int | None = None
    ) -> PluginRecord:
        check_id(record_id)
        check_expect(expect_revision)
        text = encode_value(value)  # now: the caller may change its dict once we return
        return await _to_the_end(self._put(record_id, text, expect_revision), self._writes)

    async def delete(self, record_id: str, *, expect_revision: int | None = None) -> bool:
        check_id(record_id)
        check_expect(expect_revision)
        return await _to_the_end(self._delete(record_id, expect_revision), self._writes)

    async def _put(self, record_id: str, text: str, expect: int | None) -> PluginRecord:
        async with self._lock:
            index = await self._loaded()
            current = index.revisions.get(record_id, 0)
            if expect is not None and expect != current:
                raise Conflict(
                    f"{self.namespace}/{self.collection}/{record_id} is at revision {current},"
                    f" not {expect}"
                )
            record = PluginRecord(record_id, decode_value(text), current + 1, _now())
            document = (
                f'{{\n  "id": {_json_str(record_id)},\n  "revision": {record.revision},\n'
                f'  "updated": "{record.updated}",\n  "value": {text}\n}}\n'
            )
            await asyncio.to_thread(self._write, record_id, document.encode())
            if record_id not in index.revisions:
                bisect.insort(index.ids, record_id)
            index.revisions[record_id] = record.revision
            return record

    async def _delete(self, record_id: str, expect: int | None) -> bool:
        async with self._lock:
            index = await self._loaded()
            current = index.revisions.get(record_id, 0)
            if expect is not None and expect != current:
                raise Conflict(
                    f"{self.namespace}/{self.collection}/{record_id} is at revision {current},"
                    f" not {expect}"
                )
            if not current:
                return False
            await asyncio.to_thread(self._unlink, record_id)
            del index.revisions[record_id]
            index.ids.remove(record_id)
            return True

    # -- files (worker threads) ------------------------------------------------------------

    def _path(self, record_id: str) -> Path:
        return self.directory / f"{record_id}{SUFFIX}"

    def _write(self, record_id: str, data: bytes) -> None:
        try:
            ensure_directory(self.directory)
            atomic_write_bytes(self._path(record_id), data, mode=MODE)
        except OSError as exc:
            raise StorageError(f"cannot write {self._path(record_id)}: {exc}") from exc

    def _unlink(self, record_id: str) -> None:
        try:
            os.unlink(self._path(record_id))
            fsync_directory(self.directory)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StorageError(f"cannot remove {self._path(record_id)}: {exc}") from exc

    def _read(self, record_id: str) -> PluginRecord | None:
        path = self._path(record_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}") from exc
        return _parse(record_id, data)

    async def _loaded(self) -> _Index:
        if self._index is None:
            self._index = await asyncio.to_thread(self._scan)
        return self._index

    def _scan(self) -> _Index:
        """Index the collection's files: temporary files of interrupted writes go, a file
        that does not parse (or names another id) is quarantined, never overwritten."""
        revisions: dict[str, int] = {}
        if not self.directory.is_dir():
            return _Index(revisions, [])
        sweep_temp_files(self.directory)
        for entry in os.scandir(self.directory):
            name = entry.name
            if not name.endswith(SUFFIX) or not entry.is_file(follow_symlinks=False):
                continue
            record_id = name[: -len(SUFFIX)]
            path = Path(entry.path)
            try:
                check_id(record_id)
                record = _parse(record_id, path.read_bytes())
            # Bad JSON, a missing field, a hand-made file's bad name: whatever it is, the file
            # is set aside (never overwritten) and the rest of the collection loads.
            except Exception as exc:  # noqa: BLE001
                with contextlib.suppress(OSError):
                    quarantine(self._home, path, f"unreadable plugin record: {exc}")
                continue
            if record is not None:
                revisions[record_id] = record.revision
        return _Index(revisions, sorted(revisions))


async def _to_the_end(write: Coroutine[Any, Any, T], writes: set[asyncio.Future[Any]]) -> T:
    """Run ``write`` as its own task: cancelling the caller leaves it running (it holds the
    collection's lock, so no later write overtakes it), its outcome is still retrieved, and
    the store's close waits for it (``writes``)."""
    task = asyncio.ensure_future(write)
    writes.add(task)
    task.add_done_callback(writes.discard)
    task.add_done_callback(_retrieve)
    return await asyncio.shield(task)


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("a plugin-record write its caller left failed: %s", task.exception())


def _json_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _parse(record_id: str, data: bytes) -> PluginRecord:
    document = json.loads(data)
    if not isinstance(document, dict) or document.get("id") != record_id:
        raise ValueError("not a plugin record of this id")
    revision, updated, value = document["revision"], document["updated"], document["value"]
    if not isinstance(revision, int) or revision < 1 or not isinstance(updated, str):
        raise ValueError("bad revision or update time")
    # Re-encoded and decoded: the value read back is exactly what a put of it stores.
    return PluginRecord(record_id, decode_value(encode_value(value)), revision, updated)


class JsonPluginRecordStore(PluginRecordStore):
    """Every plugin's collections under ``$PASEO_HOME/plugin-records/``."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._collections: dict[tuple[str, str], JsonPluginRecordRepository] = {}
        self._writes: set[asyncio.Future[Any]] = set()

    def collection(self, namespace: str, collection: str) -> JsonPluginRecordRepository:
        key = (check_name("namespace", namespace), check_name("collection", collection))
        repository = self._collections.get(key)
        if repository is None:
            repository = self._collections[key] = JsonPluginRecordRepository(
                self._home, namespace, collection, self._writes
            )
        return repository

    def sweep(self) -> int:
        """Remove the temporary files interrupted writes left in every collection (at open,
        before anything is written, as every owner of durable files does); how many. Reading
        the records waits for each collection's first use."""
        return sum(sweep_temp_files(self._home / ROOT / n / c) for n, c in self._directories())

    async def drain(self) -> None:
        """Wait for the writes under way (those whose callers were cancelled included)."""
        while self._writes:
            await asyncio.wait(set(self._writes))

    async def collections(self) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for namespace, collection in await asyncio.to_thread(self._directories):
            page = await self.collection(namespace, collection).list(limit=1)
            if page.items:
                found.append((namespace, collection))
        return found

    def _directories(self) -> list[tuple[str, str]]:
        root = self._home / ROOT
        pairs = []
        for namespace in sorted(_subdirectories(root)):
            for collection in sorted(_subdirectories(root / namespace)):
                with contextlib.suppress(Exception):
                    pairs.append((check_name("n", namespace), check_name("c", collection)))
        return pairs


def _subdirectories(directory: Path) -> list[str]:
    try:
        return [e.name for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
