"""Watching a checkout for changes: one ``watchfiles`` watch of its working tree and its git
dir's ``index`` and ``HEAD`` (a commit or a checkout made in a terminal changes the diff and the
status without touching a working file), coalesced and bounded.

A :class:`TreeWatch` runs two tasks: the watch, which only sets a flag, and a refresher, which
calls :meth:`TreeWatch.refresh` once per raised flag — so a burst of events (or of
:meth:`TreeWatch.poke` calls after this session's own changes) is one refresh. The watch
falls back to polling when inotify cannot watch the tree; at most :data:`MAX_WATCHES` run in
the daemon (each holds one of watchfiles' worker threads), past them a watch re-reads on a
timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

log = logging.getLogger("paseo.tswire")

DEBOUNCE_MS = 300
"""Events closer together than this are one refresh."""
POLL_MS = 2000
"""Polling period when the tree cannot be watched by inotify."""
READY_MS = 1000
"""How long the watch waits before saying it is in place (and, idle, between wake-ups)."""
MAX_WATCHES = 32
"""File watches across all sessions (each holds one of watchfiles' worker threads, a pool of
40 the daemon's own reconciliation watch shares)."""
UNWATCHED_REFRESH = 5.0
"""Seconds between re-reads of a subscription past :data:`MAX_WATCHES`."""
_watching = 0
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache"})
_GIT_FILES = frozenset({"index", "HEAD"})


def wanted(root: str, path: str) -> bool:
    """Whether a changed path under ``root`` can change the diff: a working file, or the git
    dir's index or HEAD; never the object store, the logs or bulky tool caches."""
    parts = os.path.relpath(path, root).split(os.sep)
    if parts[0] == ".git":
        return len(parts) == 2 and parts[1] in _GIT_FILES
    return not any(part in _SKIPPED_DIRS or part == ".git" for part in parts)


class TreeWatch:
    """A watch of ``root`` (``None``: nothing to watch, refreshed only when poked)."""

    def __init__(self, root: str | None) -> None:
        self.root = root
        self.changed = asyncio.Event()
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []

    async def refresh(self) -> None:
        """Read again and push what changed (subclasses)."""
        raise NotImplementedError

    def poke(self) -> None:
        self.changed.set()

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.tasks.append(loop.create_task(self._refresher()))
        if self.root is not None:
            self.tasks.append(loop.create_task(self._watcher(self.root)))

    async def _refresher(self) -> None:
        while not self.stop.is_set():
            await self.changed.wait()
            self.changed.clear()
            if self.stop.is_set():
                return
            await self.refresh()

    async def _watcher(self, root: str) -> None:
        global _watching
        if _watching >= MAX_WATCHES:
            # Every watch holds a worker thread of watchfiles' pool: past the cap, re-read on
            # a timer instead (it stays live, a little later).
            while not self.stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), UNWATCHED_REFRESH)
                self.changed.set()
            return
        _watching += 1
        try:
            await self._watch(root)
        finally:
            _watching -= 1

    async def _watch(self, root: str) -> None:
        import watchfiles

        polling = False
        while not self.stop.is_set():
            ready = False
            try:
                async for changes in watchfiles.awatch(
                    root,
                    watch_filter=lambda _change, path: wanted(root, path),
                    debounce=DEBOUNCE_MS,
                    step=50,
                    stop_event=self.stop,
                    force_polling=polling,
                    poll_delay_ms=POLL_MS,
                    recursive=True,
                    ignore_permission_denied=True,
                    rust_timeout=READY_MS,
                    yield_on_timeout=True,
                ):
                    # The first answer (changes, or an empty set when nothing happened within
                    # READY_MS) means the watch is in place: read once more, so a change made
                    # between the first read and this moment is not missed.
                    if changes or not ready:
                        self.changed.set()
                    ready = True
                return
            except Exception as exc:  # noqa: BLE001 - the watch broke: poll, or stop trying
                if polling:
                    log.warning("tswire: %s is no longer watched: %s", root, exc)
                    return
                log.info("tswire: watching %s by polling (%s)", root, exc)
                polling = True

    async def close(self) -> None:
        self.stop.set()
        self.changed.set()
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.tasks.clear()
