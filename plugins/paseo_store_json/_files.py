"""Disk primitives of the JSON store.

:class:`FileOps` is every write the store performs on a live home, behind one small class so a
test can substitute a failing one (disk full, EIO) without touching the store's logic. Open-time
housekeeping (quarantine, temp-file cleanup, torn timeline tails) lives here too.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paseo_hookspecs.atomic import atomic_write_bytes, fsync_directory, sweep_temp_files
from paseo_hookspecs.store import QuarantinedFile

log = logging.getLogger("paseo.store.json")

QUARANTINE_DIR = "quarantine"
"""Where unloadable files go, mirroring their path relative to the home."""


def encode_json(value: Any) -> bytes:
    """``value`` as the bytes of a record file: 2-space indented JSON and a final newline.

    ``allow_nan=False`` because ``NaN`` is not JSON: a TypeScript reader would reject the file.
    """
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def ensure_directory(directory: Path) -> None:
    """Create ``directory`` and missing parents, making each new entry durable."""
    missing: list[Path] = []
    current = directory
    while not current.is_dir():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue
        fsync_directory(path.parent)


APPEND_FDS = 64
"""Timeline files kept open for appending (least recently appended to closed first): a live
agent's append is one ``write``, not an open, fstat, seek, write and close."""


class _OpenAppend:
    """A file kept open for appending, and its size as this process left it."""

    __slots__ = ("fd", "size")

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size


class FileOps:
    """The store's durable file operations on a live home.

    Each method either completes durably or raises ``OSError`` with the previous content of the
    target intact (see :func:`paseo_hookspecs.atomic.atomic_write_bytes`); :meth:`append` alone
    leaves the fsync to a later :meth:`sync`. Tests subclass this to inject failures at a
    precise step.

    Files appended to stay open (up to :data:`APPEND_FDS`); replacing or removing one through
    these methods closes it first, and :meth:`close` closes them all. A kept file's size is
    taken from the last append (the daemon's home lock makes the store its only writer); after
    a failed append the file is closed, so the next one reopens it and looks. Appends run on
    the event loop's thread and replacements in workers, hence the lock around the table.
    """

    def __init__(self) -> None:
        self._appending: OrderedDict[Path, _OpenAppend] = OrderedDict()
        self._appending_lock = threading.Lock()

    def write_bytes(self, path: Path, data: bytes) -> None:
        """Atomically replace ``path`` with ``data`` (creating its directory)."""
        self.release(path)
        ensure_directory(path.parent)
        atomic_write_bytes(path, data)

    def remove(self, path: Path) -> bool:
        """Durably remove ``path``; ``False`` when it did not exist."""
        self.release(path)
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
        fsync_directory(path.parent)
        return True

    def append(self, path: Path, data: bytes, committed_size: int) -> int:
        """Append ``data`` after the first ``committed_size`` bytes of ``path``.

        Anything beyond ``committed_size`` (a torn line of an earlier failed append) is cut
        first, and a failure cuts the file back, so the append is all or nothing. Returns the new
        committed size. The data is in the file (a process killed now keeps it) but not forced
        to the disk: the caller passes the path (and its directory, for a new file) to
        :meth:`sync` later.
        """
        with self._appending_lock:
            handle = self._appending.pop(path, None)
        if handle is None or handle.size != committed_size:
            # Opened now, or left at another size than the caller's: the file says what is
            # beyond the committed bytes.
            if handle is None:
                handle = self._open_for_append(path)
            if handle.size != committed_size:
                self._cut(handle, path, committed_size)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(handle.fd, view) :]
        except OSError:
            try:
                os.ftruncate(handle.fd, committed_size)
            except OSError:
                # The next append cuts the tail again (it reopens the file and looks).
                log.exception("could not cut %s back after a failed append", path)
            os.close(handle.fd)
            raise
        handle.size = committed_size + len(data)
        self._keep(path, handle)
        return handle.size

    @staticmethod
    def _open_for_append(path: Path) -> _OpenAppend:
        ensure_directory(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        try:
            return _OpenAppend(fd, os.fstat(fd).st_size)
        except OSError:
            os.close(fd)
            raise

    @staticmethod
    def _cut(handle: _OpenAppend, path: Path, committed_size: int) -> None:
        try:
            os.ftruncate(handle.fd, committed_size)
        except OSError:
            os.close(handle.fd)
            raise
        handle.size = committed_size

    def _keep(self, path: Path, handle: _OpenAppend) -> None:
        with self._appending_lock:
            self._appending[path] = handle
            evicted = (
                self._appending.popitem(last=False)[1]
                if len(self._appending) > APPEND_FDS
                else None
            )
        if evicted is not None:
            os.close(evicted.fd)

    def release(self, path: Path) -> None:
        """Close ``path`` if it is kept open for appending (before it is replaced or removed,
        so an append never lands in a file no longer in the home)."""
        with self._appending_lock:
            handle = self._appending.pop(path, None)
        if handle is not None:
            os.close(handle.fd)

    def close(self) -> None:
        """Close every file kept open for appending."""
        with self._appending_lock:
            handles, self._appending = list(self._appending.values()), OrderedDict()
        for handle in handles:
            os.close(handle.fd)

    def sync(self, files: Sequence[Path], directories: Sequence[Path]) -> None:
        """Force ``files`` (written by :meth:`append`) and ``directories`` (where such a file
        was created) to disk; a file deleted meanwhile is skipped."""
        for path in files:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for directory in directories:
            fsync_directory(directory)


def _quarantine_target(home: Path, path: Path) -> Path:
    relative = path.relative_to(home)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = home / QUARANTINE_DIR / relative
    target = base.with_name(f"{base.name}.{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = base.with_name(f"{base.name}.{stamp}.{counter}")
    return target


def quarantine(home: Path, path: Path, reason: str, *, copy: bool = False) -> QuarantinedFile:
    """Move (or, with ``copy``, durably copy) ``path`` under ``{home}/quarantine/``.

    A copy is used when the original stays in place for now but a later rewrite will drop part
    of it: the copy is durable before this returns, so nothing is lost at that rewrite.
    """
    target = _quarantine_target(home, path)
    ensure_directory(target.parent)
    if copy:
        atomic_write_bytes(target, path.read_bytes())
        log.warning("copied %s to %s before dropping invalid entries: %s", path, target, reason)
    else:
        os.replace(path, target)
        fsync_directory(path.parent)
        fsync_directory(target.parent)
        log.warning("quarantined %s to %s: %s", path, target, reason)
    return QuarantinedFile(original=str(path), moved_to=str(target), reason=reason)


def quarantine_bytes(home: Path, path: Path, data: bytes, reason: str) -> QuarantinedFile:
    """Durably write ``data`` (a part of ``path`` about to be dropped from it: an invalid
    timeline line) under ``{home}/quarantine/``, named after ``path``."""
    target = _quarantine_target(home, path)
    ensure_directory(target.parent)
    atomic_write_bytes(target, data)
    log.warning("copied part of %s to %s before dropping it: %s", path, target, reason)
    return QuarantinedFile(original=str(path), moved_to=str(target), reason=reason)


def remove_temp_files(directory: Path, *, target_names: frozenset[str] | None = None) -> int:
    """Delete leftovers of interrupted atomic writes in ``directory``; returns how many.

    With ``target_names``, only temp files of those targets are removed: in a directory the
    store shares with other writers (the home root, ``plugins/``) it must not touch theirs.
    """
    return sweep_temp_files(directory, target_names)


def cut_torn_tail(path: Path) -> int:
    """Truncate ``path`` after its last newline (a line an interrupted append left half
    written); returns the number of bytes cut."""
    with open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        # Scan backwards for the end of the last complete line.
        position = size
        keep = 0
        chunk = 64 * 1024
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            block = handle.read(position - start)
            index = block.rfind(b"\n")
            if index >= 0:
                keep = start + index + 1
                break
            position = start
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    log.warning("cut a torn trailing line (%d bytes) from %s", size - keep, path)
    return size - keep
