"""The cold-start hot path of the JSON store: every one-file-per-record collection read,
validated on its index fields and indexed (blocking; run in the open's worker thread).

At 50,000 agents this is nearly all of an open, so it does the least per file: the directory
scan's entries give names and types (no ``stat``), paths stay ``str`` (``Path`` objects cost
as much as parsing), a file is read with one ``open``/``read``/``close`` of its descriptor
(the buffered file object ``open()`` builds costs as much again), and reader threads read the
next batches while this thread validates the current one.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs.atomic import TEMP_SUFFIX, fsync_directory
from paseo_hookspecs.records import sanitize_cwd
from paseo_hookspecs.store import QuarantinedFile
from pydantic import BaseModel, ValidationError

from paseo_store_json._core import describe_validation_error
from paseo_store_json._files import quarantine
from paseo_store_json._index import Row

log = logging.getLogger("paseo.store.json")

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R", bound=Row)

READERS = 2
"""Reader threads: each has one file open at a time, so at most this many are open at once
(however many records the home holds), and reading overlaps validation on the loading
thread."""

_READ_BATCH = 256
_READ_CHUNK = 1 << 16
"""One read takes a whole record file (a few KB) and the next finds its end."""

Canonical = Callable[[Any, str], bool]
"""Whether a file (its path) is where the record with these index fields is written."""


def reader_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="paseo-store-read")


def scan(directory: str, temp_before: float | None = None) -> list[str]:
    """The ``*.json`` files of ``directory``; leftover temp files there are deleted (only those
    last changed before ``temp_before``, a time, when given: a scan beside a serving store
    must not delete the temp file of a write in progress)."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    files: list[str] = []
    removed_temp = False
    for entry in entries:
        name = entry.name
        if name.startswith(".") and name.endswith(TEMP_SUFFIX):
            if entry.is_file(follow_symlinks=False) and (
                temp_before is None or _changed_before(entry, temp_before)
            ):
                os.unlink(entry.path)
                removed_temp = True
                log.info("removed leftover temporary file %s", entry.path)
        elif name.endswith(".json") and entry.is_file():
            files.append(entry.path)
    if removed_temp:
        fsync_directory(Path(directory))
    return files


def _changed_before(entry: os.DirEntry[str], when: float) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_mtime < when
    except FileNotFoundError:
        return False


def scan_tree(directory: str, temp_before: float | None = None) -> list[str]:
    """The ``*.json`` files of every subdirectory of ``directory`` (the agents' cwd folders)."""
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    files: list[str] = []
    for entry in entries:
        if entry.is_dir():
            files += scan(entry.path, temp_before)
    return files


class Stopped(Exception):
    """A background load was asked to stop (the store is closing)."""


def read_file(path: str) -> bytes:
    """The whole of ``path``. Reads until the end is seen: a short read alone does not prove
    it (a signal may cut one), and a torn read would quarantine a sound record."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, _READ_CHUNK)]
        while chunks[-1]:
            chunks.append(os.read(fd, _READ_CHUNK))
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 2 else b"".join(chunks)


def _read_batch(paths: list[str]) -> list[bytes]:
    return [read_file(path) for path in paths]


def _read_batch_present(paths: list[str]) -> list[bytes | None]:
    """A batch read beside a serving store: a file removed since the scan is ``None``."""
    found: list[bytes | None] = []
    for path in paths:
        try:
            found.append(read_file(path))
        except FileNotFoundError:
            found.append(None)
    return found


def torn_files(reader: ThreadPoolExecutor, directory: str, suffix: str) -> list[str]:
    """The ``suffix`` files of ``directory`` that do not end in a newline (an append a crash
    cut short). Only the last byte of each is read, on the reader threads: a home holds a
    timeline per agent, and opening each as a file object took longer than loading the
    agents."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    paths = [entry.path for entry in entries if entry.name.endswith(suffix) and entry.is_file()]
    batches = [paths[i : i + _READ_BATCH] for i in range(0, len(paths), _READ_BATCH)]
    return [
        path
        for batch, torn in zip(batches, reader.map(_torn_batch, batches), strict=True)
        for path, is_torn in zip(batch, torn, strict=True)
        if is_torn
    ]


def _torn_batch(paths: list[str]) -> list[bool]:
    return [_ends_torn(path) for path in paths]


def _ends_torn(path: str) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
    finally:
        os.close(fd)


def id_is_canonical(record: Any, path: str) -> bool:
    return path.rpartition(os.sep)[2] == f"{getattr(record, 'id', None)}.json"


def agent_is_canonical() -> Canonical:
    """A check that an agent file sits at ``{sanitized cwd}/{id}.json``. Its sanitized cwds
    are remembered: a home's agents share a few cwds, and sanitizing is most of the check."""
    sanitized: dict[str, str] = {}

    def check(record: Any, path: str) -> bool:
        folder, _, name = path.rpartition(os.sep)
        if name != f"{record.id}.json":
            return False
        cwd = record.cwd
        expected = sanitized.get(cwd)
        if expected is None:
            expected = sanitized[cwd] = sanitize_cwd(cwd)
        return folder.rpartition(os.sep)[2] == expected

    return check


def load_files(
    home: Path,
    reader: ThreadPoolExecutor,
    paths: list[str],
    model: type[M],
    row_type: Callable[[M, str], R],
    *,
    kind: str,
    into: dict[str, R],
    quarantined: list[QuarantinedFile],
    canonical: Canonical = id_is_canonical,
    stop: threading.Event | None = None,
) -> None:
    """Validate the records in ``paths`` as ``model`` and index them into ``into`` (by id).

    Only the index row of each record is kept. For agents and schedules ``model`` checks the
    JSON and the indexed fields only (see :func:`paseo_store_json._index.index_fields`;
    pydantic's validation of those few fields straight from the bytes costs less than
    ``json.loads`` of the whole file): a file that is not JSON or whose indexed fields are
    invalid is quarantined now, one invalid elsewhere when it is first read.

    With ``stop`` (a load in the background, beside a serving store) a file removed since the
    scan is skipped, and :class:`Stopped` is raised between batches once ``stop`` is set.
    """
    batches = [paths[i : i + _READ_BATCH] for i in range(0, len(paths), _READ_BATCH)]
    canonical_paths: dict[str, bool] = {}
    validate = model.model_validate_json
    read: Callable[[list[str]], list[bytes | None]] = (
        _read_batch if stop is None else _read_batch_present  # type: ignore[assignment]
    )
    for batch, contents in zip(batches, reader.map(read, batches), strict=True):
        if stop is not None and stop.is_set():
            raise Stopped
        for path, data in zip(batch, contents, strict=True):
            if data is None:
                continue
            try:
                record = validate(data)
            except ValidationError as exc:
                try:
                    moved = quarantine(home, Path(path), describe_validation_error(exc))
                except FileNotFoundError:
                    continue  # replaced or removed meanwhile: not ours to judge any more
                quarantined.append(moved)
                continue
            row = row_type(record, path)
            is_canonical = canonical(record, path)
            previous = into.get(row.id)
            if previous is None:
                into[row.id] = row
                canonical_paths[row.id] = is_canonical
                continue
            # Two files claim one id (an interrupted move, a hand copy). Keep the one at its
            # canonical path, else the newer file; the other is moved aside, never dropped.
            keep, lose = row, previous
            was_canonical = canonical_paths[row.id]
            if (was_canonical and not is_canonical) or (
                was_canonical == is_canonical
                and os.stat(previous.path).st_mtime_ns > os.stat(path).st_mtime_ns
            ):
                keep, lose = previous, row
            into[row.id] = keep
            canonical_paths[row.id] = was_canonical or is_canonical
            quarantined.append(
                quarantine(home, Path(lose.path), f"duplicate {kind} {row.id}; kept {keep.path}")
            )
