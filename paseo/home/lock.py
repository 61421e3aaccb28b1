"""Single ownership of a state root.

The daemon takes an exclusive ``flock`` on ``paseo.pid.lock`` before it touches anything
durable and holds it for its whole life; the kernel releases it when the process dies, however
it dies, so a crash never leaves a stale lock. A second daemon on the same home fails to take
the lock and exits before writing anything.

The lock file may be unlinked at shutdown, so after locking we check that the path still names
the inode we locked; if not (a previous owner unlinked it between our open and our lock) we
retry on the new file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Any

from paseo.fs import read_json


class HomeBusy(Exception):
    """Another live daemon owns the state root."""

    def __init__(self, home: Path, holder: dict[str, Any] | None) -> None:
        pid = holder.get("pid") if holder else None
        started = holder.get("startedAt") if holder else None
        detail = f" (pid {pid}, started {started})" if pid else ""
        super().__init__(
            f"another Paseo daemon already owns {home}{detail}; "
            f"stop it with `paseo daemon stop` or use a different PASEO_HOME"
        )
        self.home = home
        self.holder = holder


def read_pid_file(path: Path) -> dict[str, Any] | None:
    """The pid marker's JSON object, or ``None`` when missing or unreadable."""
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    if isinstance(data, int):  # a bare number written by an older daemon
        return {"pid": data}
    return data if isinstance(data, dict) else None


class HomeLock:
    """An exclusive OS lock on a state root's lock file."""

    def __init__(self, lock_path: Path, pid_path: Path) -> None:
        self.lock_path = lock_path
        self.pid_path = pid_path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`HomeBusy` (having written nothing)."""
        for _ in range(10):
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise HomeBusy(self.lock_path.parent, read_pid_file(self.pid_path)) from None
            locked = os.fstat(fd)
            try:
                current = os.stat(self.lock_path)
            except FileNotFoundError:
                current = None
            if current is not None and (current.st_dev, current.st_ino) == (
                locked.st_dev,
                locked.st_ino,
            ):
                self._fd = fd
                return
            os.close(fd)
        raise HomeBusy(self.lock_path.parent, read_pid_file(self.pid_path))

    def release(self, *, remove: bool = True) -> None:
        """Release the lock; with ``remove`` the lock file is unlinked first (while held)."""
        if self._fd is None:
            return
        if remove:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path)
        os.close(self._fd)
        self._fd = None
