"""``$PASEO_HOME/quarantine/``: files the daemon could not use, moved aside instead of deleted.

A file that fails to load (a corrupt record, a ``server-id`` that is not text, an unreadable
keypair) is moved to ``quarantine/<its path relative to the home>.<UTC stamp>`` before anything
replaces it, so nothing is lost and a person can inspect or restore it. The directory itself is
the durable report: :func:`list_quarantine` reads it, whoever moved the file there (the kernel
for meta files, the store driver for records), and :func:`restore` puts one back.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("paseo.home")

QUARANTINE_DIR = "quarantine"


@dataclass(frozen=True)
class QuarantineEntry:
    """One quarantined file: where it is now, where it came from, when it was moved."""

    path: Path
    original: Path
    quarantinedAt: str
    size: int


def _fsync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def quarantine_file(home: Path, path: Path, reason: str) -> Path:
    """Move ``path`` (inside ``home``) under ``home/quarantine/``, durably; the new path."""
    relative = path.relative_to(home)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = home / QUARANTINE_DIR / relative
    target = base.with_name(f"{base.name}.{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = base.with_name(f"{base.name}.{stamp}.{counter}")
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.replace(path, target)
    _fsync_directory(path.parent)
    _fsync_directory(target.parent)
    log.warning("quarantined %s to %s: %s", path, target, reason)
    return target


def _split_stamp(name: str) -> tuple[str, str] | None:
    """``("projects.json", "20261201T085900")`` from ``projects.json.20261201T085900[.2]``."""
    parts = name.split(".")
    for index in range(len(parts) - 1, 0, -1):
        part = parts[index]
        if len(part) == 15 and part[8] == "T" and part.replace("T", "").isdigit():
            return ".".join(parts[:index]), part
    return None


def list_quarantine(home: Path) -> list[QuarantineEntry]:
    """Every file under ``home/quarantine/``, oldest first."""
    root = home / QUARANTINE_DIR
    entries: list[QuarantineEntry] = []
    if not root.is_dir():
        return entries
    for directory, _dirs, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            split = _split_stamp(name)
            if split is None:
                continue
            original_name, stamp = split
            relative = path.parent.relative_to(root) / original_name
            with contextlib.suppress(OSError):
                entries.append(
                    QuarantineEntry(
                        path=path,
                        original=home / relative,
                        quarantinedAt=(
                            f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T"
                            f"{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z"
                        ),
                        size=path.stat().st_size,
                    )
                )
    entries.sort(key=lambda entry: (entry.quarantinedAt, str(entry.path)))
    return entries


class RestoreRefused(Exception):
    """The file cannot be put back; the message says why and what to do."""


def restore(home: Path, quarantined: Path, *, force: bool = False) -> Path:
    """Move a quarantined file back to where it came from; refuses to overwrite a file that
    exists there unless ``force``. The original path."""
    for entry in list_quarantine(home):
        if entry.path == quarantined.resolve() or entry.path == quarantined:
            break
    else:
        raise RestoreRefused(f"{quarantined} is not a file in {home / QUARANTINE_DIR}")
    if entry.original.exists() and not force:
        raise RestoreRefused(
            f"{entry.original} exists; move it away first or pass --force to replace it"
        )
    entry.original.parent.mkdir(parents=True, exist_ok=True)
    os.replace(entry.path, entry.original)
    _fsync_directory(entry.original.parent)
    _fsync_directory(entry.path.parent)
    return entry.original
