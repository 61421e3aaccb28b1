"""Filesystem events that wake reconciliation early (``watchfiles``, the Rust ``notify`` backend).

Only the few directories whose entries carry Git facts are watched, each non-recursively: the git
dir (``HEAD``) and the common dir (``config``) of a checkout, and a non-Git directory itself (so
``git init`` is seen). A working tree is never watched, so a large repository costs two watches,
not one per file. Events are filtered down to the exact files a location depends on and reported
as the keys of the locations to re-check; the reconciler's stat signatures then decide whether
anything is actually re-read.

Events are a fast path, never the only one: the reconciler keeps its periodic pass, so a missing
``watchfiles``, an exhausted inotify budget or a watch that broke (its directory was removed)
costs latency, not correctness. A failure is logged once; watching is retried whenever the set of
watched directories changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

log = logging.getLogger("paseo.workspaces.watch")

DEBOUNCE_MS = 500
"""Longest a burst of events is gathered before it is reported."""
STEP_MS = 50
"""A batch is reported once no event arrived for this long (and the stop check period)."""
SETTLE = 1.0
"""Seconds after which the locations an event named are checked once more. Git writes a
repository in several steps (``git init`` creates ``.git`` before ``HEAD``), so the pass an
event triggers may read a half-written state; likewise a directory that just joined the watch set
may change before its watch is in place. The second check closes both gaps; it costs a few
``stat`` calls."""
STOP_TIMEOUT = 5.0
"""Bound on waiting for the watch thread when stopping (it notices a stop within ``STEP_MS``)."""


@dataclass(frozen=True)
class WatchSet:
    """What to watch: directories, and which location keys each watched file belongs to."""

    dirs: frozenset[str] = frozenset()
    files: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Event path -> keys of the locations depending on it (also under the directory's real
    path, in case the backend reports resolved paths)."""


def build_watch_set(files_by_key: Mapping[str, Iterable[str]]) -> WatchSet:
    """Blocking (``stat``/``realpath``): the watch set for ``key -> files it depends on``.
    A file whose directory does not exist is left out (a watch on it would fail)."""
    files: dict[str, set[str]] = {}
    dirs: set[str] = set()
    existing: dict[str, str | None] = {}
    for key, paths in files_by_key.items():
        for path in paths:
            directory, name = os.path.split(path)
            if directory not in existing:
                existing[directory] = (
                    os.path.realpath(directory) if os.path.isdir(directory) else None
                )
            real = existing[directory]
            if real is None:
                continue
            dirs.add(directory)
            files.setdefault(path, set()).add(key)
            files.setdefault(os.path.join(real, name), set()).add(key)
    return WatchSet(frozenset(dirs), {path: frozenset(keys) for path, keys in files.items()})


class LocationWatcher:
    """One asyncio task running ``watchfiles.awatch`` over the current :class:`WatchSet`;
    ``on_change`` receives the keys of locations whose watched files changed (and, ``SETTLE``
    seconds later, the same keys again)."""

    def __init__(
        self,
        on_change: Callable[[set[str]], None],
        *,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        settle: float = SETTLE,
    ) -> None:
        self._on_change = on_change
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        self._settle = settle
        self._set = WatchSet()
        # Set to make the running awatch return: the watch set changed, or we are stopping.
        self._restart = asyncio.Event()
        self._stopping = False
        self._failure_logged = False
        self._task: asyncio.Task[None] | None = None
        self._timers: set[asyncio.TimerHandle] = set()
        self.reported = 0
        """Event batches reported so far (settle re-checks not counted); for diagnostics."""

    @property
    def running(self) -> bool:
        """Whether the watcher task is alive (it is not after :meth:`stop`, nor when
        ``watchfiles`` is unavailable)."""
        return self._task is not None and not self._task.done()

    @property
    def watched_dirs(self) -> frozenset[str]:
        """The directories the watcher is asked to watch."""
        return self._set.dirs

    def start(self) -> None:
        """Start the watcher task (call from the event loop). Everything in the watch set is
        re-checked after ``settle``: it may have changed before the watches were in place."""
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._run(), name="paseo-reconcile-watch")
            self._later({key for keys in self._set.files.values() for key in keys})

    async def stop(self) -> None:
        """Stop watching and wait (bounded) for the task to end."""
        self._stopping = True
        self._restart.set()
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        task, self._task = self._task, None
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)
        except TimeoutError:
            log.warning("file watcher did not stop within %.0f s; cancelling it", STOP_TIMEOUT)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def update(self, watch_set: WatchSet) -> None:
        """Replace the watch set; the watch restarts only when its directories changed.
        Locations under newly watched directories are re-checked after ``settle`` (a change
        landing before their watch is in place would otherwise wait for the periodic pass)."""
        added = watch_set.dirs - self._set.dirs
        restart = watch_set.dirs != self._set.dirs
        self._set = watch_set
        if not restart or self._stopping:
            return
        self._restart.set()
        if self._task is not None:
            keys = {
                key
                for path, path_keys in watch_set.files.items()
                if os.path.dirname(path) in added
                for key in path_keys
            }
            self._later(keys)

    def _emit(self, keys: set[str]) -> None:
        if keys and not self._stopping:
            self._on_change(keys)

    def _later(self, keys: set[str]) -> None:
        if not keys:
            return
        timer: asyncio.TimerHandle | None = None

        def fire() -> None:
            if timer is not None:
                self._timers.discard(timer)
            self._emit(keys)

        timer = asyncio.get_running_loop().call_later(self._settle, fire)
        self._timers.add(timer)

    def _keys_for(self, paths: Iterable[str]) -> set[str]:
        files = self._set.files
        return {key for path in paths for key in files.get(path, ())}

    def _wanted(self, _change: object, path: str) -> bool:
        return path in self._set.files

    def _failed(self, what: str, exc: BaseException | None) -> None:
        if self._failure_logged:
            log.debug("file watching unavailable (%s): %s", what, exc)
            return
        self._failure_logged = True
        log.warning(
            "file watching unavailable (%s: %s); reconciliation relies on its periodic pass",
            what,
            exc,
        )

    async def _run(self) -> None:
        try:
            from watchfiles import awatch
        except ImportError as exc:
            self._failed("watchfiles is not installed", exc)
            return
        while not self._stopping:
            self._restart.clear()
            dirs = sorted(self._set.dirs)
            if not dirs:
                await self._restart.wait()
                continue
            try:
                # The watch is built synchronously inside awatch; non-recursive watches on a
                # few hundred directories take well under a millisecond, and the waiting runs
                # in a worker thread.
                async for changes in awatch(
                    *dirs,
                    watch_filter=self._wanted,
                    debounce=self._debounce_ms,
                    step=self._step_ms,
                    stop_event=self._restart,
                    recursive=False,
                    # True would also swallow an exhausted inotify budget, silently.
                    ignore_permission_denied=False,
                ):
                    keys = self._keys_for(path for _change, path in changes)
                    self.reported += 1
                    self._emit(keys)
                    self._later(keys)
            except FileNotFoundError as exc:
                # A directory vanished between the pass that listed it and the watch; the next
                # pass drops it from the set, which restarts the watch.
                log.debug("a watched directory vanished: %s", exc)
                if not self._restart.is_set():
                    await self._restart.wait()
            except (OSError, RuntimeError) as exc:
                # A watch that cannot be placed or kept (inotify limits, permissions, a backend
                # error: OSError or WatchfilesRustInternalError, a RuntimeError).
                self._failed("watch failed", exc)
                # Retrying the same set would fail the same way; the next change to the set
                # (the periodic pass notices a vanished directory) is worth a new attempt.
                if not self._restart.is_set():
                    await self._restart.wait()
