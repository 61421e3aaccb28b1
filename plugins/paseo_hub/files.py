"""Owner-only atomic files: the relationship holds a secret, so it is 0600 from creation.

The plugin cannot use the kernel's writer (plugins import only the contract), and needs only
this: a whole-file replace that leaves either the old or the new version after a crash, and
the sweep of the temporary files a killed writer left behind.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
from pathlib import Path
from typing import Any

log = logging.getLogger("paseo.hub")

TEMP_SUFFIX = ".tmp"
"""Temporary files are ``.{name}.{random}.tmp`` beside their target (the kernel's naming)."""


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json(path: Path, document: Any) -> None:
    """Replace ``path`` with ``document``: a fresh 0600 temp file in the same directory
    (``O_CREAT | O_EXCL``, so it is never world-readable, not even briefly), fsync, rename,
    fsync the directory. Blocking: call it through ``asyncio.to_thread`` on the loop."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    _fsync_dir(path.parent)


def read_json(path: Path) -> Any:
    """The parsed document, or ``None`` when the file does not exist."""
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        return None


def remove(path: Path) -> None:
    """Delete ``path`` durably (a missing file is fine)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    _fsync_dir(path.parent)
