"""Atomic, durable file writes, shared by the kernel and every plugin that keeps files.

A write goes to a temporary file in the target's own directory (same filesystem, so the rename
is atomic), is fsync-ed, renamed over the target, and then the directory is fsync-ed so the
rename itself survives a power cut. Readers therefore see the old file or the new one, never a
mix. The temporary file is created with its final mode (``O_CREAT | O_EXCL``), so a secret is
never readable by others, not even for an instant, and is never chmod-ed afterwards.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger("paseo.fs")

TEMP_SUFFIX = ".tmp"
"""Temporary files are named ``.{name}.{random}.tmp``; loaders skip and clean them."""


def fsync_directory(directory: Path) -> None:
    """Make a directory's entries (a rename, a new file) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_path_for(target: Path) -> Path:
    """A fresh temporary path beside ``target``."""
    return target.with_name(f".{target.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")


def is_temp_file(path: Path) -> bool:
    """Whether ``path`` is a temporary file left by an interrupted atomic write."""
    return path.name.startswith(".") and path.name.endswith(TEMP_SUFFIX)


def sweep_temp_files(directory: Path, targets: Iterable[str] | None = None) -> int:
    """Delete the temporary files interrupted atomic writes left in ``directory``; how many.

    A process killed between creating its temporary file and renaming it leaves the file for
    good (and it may hold a secret): every owner of durable files calls this when it opens, before
    it writes anything, for the directories it alone writes. With ``targets`` (file names), only
    the temporary files of those targets go: in a directory shared with other writers (the home
    root) an owner must not touch theirs. A missing directory has nothing to sweep.
    """
    names = None if targets is None else tuple(f".{name}." for name in targets)
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return 0
    for entry in entries:
        if not is_temp_file(Path(entry.name)) or not entry.is_file(follow_symlinks=False):
            continue
        if names is not None and not entry.name.startswith(names):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
            removed += 1
            log.info("removed leftover temporary file %s", entry.path)
    if removed:
        fsync_directory(directory)
    return removed


def atomic_write_bytes(target: Path, data: bytes, *, mode: int = 0o644, sync: bool = True) -> None:
    """Replace ``target`` with ``data`` atomically.

    When this returns (with ``sync=True``) the new content is durable. On any failure (disk
    full, permission denied) the previous file is intact, the temporary file is removed and the
    ``OSError`` propagates.
    """
    tmp = temp_path_for(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if sync:
        fsync_directory(target.parent)


def atomic_write_text(target: Path, text: str, *, mode: int = 0o644, sync: bool = True) -> None:
    """Replace ``target`` with UTF-8 ``text`` atomically (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(target, text.encode("utf-8"), mode=mode, sync=sync)


def atomic_write_json(target: Path, value: Any, *, mode: int = 0o644, sync: bool = True) -> None:
    """Replace ``target`` with ``value`` as indented JSON, atomically."""
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    atomic_write_bytes(target, text.encode("utf-8"), mode=mode, sync=sync)


def read_json(path: Path) -> Any:
    """Parse a JSON file. Raises ``FileNotFoundError`` or ``ValueError`` (bad JSON)."""
    with open(path, "rb") as handle:
        return json.loads(handle.read())


def create_private_file(target: Path, data: bytes) -> None:
    """Write a secret atomically with mode 0600 from creation."""
    atomic_write_bytes(target, data, mode=0o600)
