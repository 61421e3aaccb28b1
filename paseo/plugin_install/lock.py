"""One install operation at a time per state root: ``plugins/.lock``."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
from collections.abc import AsyncIterator

from paseo_hookspecs.errors import Conflict

from paseo.plugin_install.layout import ManagedLayout

LOCK_TIMEOUT = 60.0
"""Seconds to wait for another install operation on the same state root."""


class InstallLock:
    """The exclusive OS lock on ``plugins/.lock`` an install, update or remove holds.

    While it is held, :attr:`held` is its descriptor: the helper processes an operation starts
    (pip, the verifier) inherit it, so a second operation cannot start while one of them still
    runs, even when this process was killed.
    """

    def __init__(self, layout: ManagedLayout) -> None:
        self.layout = layout
        self.held: tuple[int, ...] = ()

    def _acquire(self) -> int:
        self.layout.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.layout.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise Conflict("another plugin install, update or remove is running") from None
                time.sleep(0.05)

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold the lock for the ``async with`` block (``Conflict`` after :data:`LOCK_TIMEOUT`)."""
        fd = await asyncio.to_thread(self._acquire)
        self.held = (fd,)
        try:
            yield
        finally:
            self.held = ()
            await asyncio.to_thread(self._tidy)
            os.close(fd)

    def _tidy(self) -> None:
        """Drop the private working directories when they are empty."""
        for directory in (self.layout.staging, self.layout.trash):
            with contextlib.suppress(OSError):
                directory.rmdir()
