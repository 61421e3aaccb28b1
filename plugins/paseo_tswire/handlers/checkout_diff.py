"""``subscribe_checkout_diff_request`` / ``unsubscribe_checkout_diff_request``: a live diff of
a checkout, pushed as ``checkout_diff_update`` whenever it changes.

Each subscription watches its checkout's working tree with ``watchfiles`` (the library the
daemon's reconciliation already uses; inotify, falling back to polling when the kernel's
watch budget is spent) plus the git dir's ``index`` and ``HEAD`` (a commit or a checkout made
in a terminal changes the diff without touching a working file). A burst of events is one
refresh (:data:`DEBOUNCE_MS`), a refresh is one ``git.diff`` call through the session (so
with its access, under the daemon's Git limiter), and only a diff that differs from the last
one pushed is sent. At most :data:`MAX_SUBSCRIPTIONS` run per session (the oldest is ended
for a new one) and :data:`MAX_WATCHES` file watches in all (beyond, a subscription re-reads on
a timer); all of a session's end when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections import OrderedDict
from typing import Any

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import checkout as ck

log = logging.getLogger("paseo.tswire")

ROOM = "checkout_diffs"
MAX_SUBSCRIPTIONS = 16
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


def error_of(exc: RpcFailure) -> ck.CheckoutError:
    code: ck.ErrorCode = "UNKNOWN"
    if exc.code == "not_git_repo":
        code = "NOT_GIT_REPO"
    elif exc.code == "merge_conflict":
        code = "MERGE_CONFLICT"
    elif exc.code == "access_denied":
        code = "NOT_ALLOWED"
    return ck.CheckoutError(code=code, message=exc.message)


def diff_files(result: dict[str, Any]) -> list[ck.DiffFile]:
    return [
        ck.DiffFile(
            path=f["path"],
            isNew=f["isNew"],
            isDeleted=f["isDeleted"],
            additions=f["additions"],
            deletions=f["deletions"],
            status=f["status"],
            hunks=[
                ck.DiffHunk(
                    oldStart=h["oldStart"],
                    oldCount=h["oldCount"],
                    newStart=h["newStart"],
                    newCount=h["newCount"],
                    lines=[
                        ck.DiffLine(type=ln["type"], content=ln["content"]) for ln in h["lines"]
                    ],
                )
                for h in f["hunks"]
            ],
        )
        for f in result.get("files") or []
    ]


class DiffWatch:
    """One subscription: its watch task and its refresh task."""

    def __init__(self, session: ClientSession, msg: ck.SubscribeDiff, root: str | None) -> None:
        self.session = session
        self.subscription_id = msg.subscriptionId
        self.cwd = msg.cwd
        self.params: dict[str, Any] = {
            "cwd": msg.cwd,
            "scope": "base" if msg.compare.mode == "base" else "uncommitted",
        }
        if msg.compare.baseRef:
            self.params["baseRef"] = msg.compare.baseRef
        if msg.compare.ignoreWhitespace:
            self.params["ignoreWhitespace"] = True
        self.root = root
        self.last: str | None = None
        self.changed = asyncio.Event()
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []

    async def read(self) -> tuple[list[ck.DiffFile], ck.CheckoutError | None]:
        try:
            result = await self.session.call("git.diff", self.params)
        except RpcFailure as exc:
            return [], error_of(exc)
        return diff_files(result), None

    def remember(self, files: list[ck.DiffFile], error: ck.CheckoutError | None) -> bool:
        """Record what was sent; False when it equals what was sent last."""
        key = json.dumps(
            [[f.wire() for f in files], error.wire() if error else None], sort_keys=True
        )
        if key == self.last:
            return False
        self.last = key
        return True

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.tasks.append(loop.create_task(self._refresher()))
        if self.root is not None:
            self.tasks.append(loop.create_task(self._watcher(self.root)))

    async def _refresher(self) -> None:
        while not self.stop.is_set():
            await self.changed.wait()
            self.changed.clear()
            files, error = await self.read()
            if self.stop.is_set():
                return
            if self.remember(files, error):
                await self.session.push(
                    "checkout_diff_update",
                    ck.DiffUpdate(
                        subscriptionId=self.subscription_id, cwd=self.cwd, files=files, error=error
                    ),
                )

    async def _watcher(self, root: str) -> None:
        global _watching
        if _watching >= MAX_WATCHES:
            # Every watch holds a worker thread of watchfiles' pool: past the cap, re-read on
            # a timer instead (the diff stays live, a little later).
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
                    log.warning("tswire: the diff of %s is no longer watched: %s", root, exc)
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


class DiffRoom:
    """The session's diff subscriptions (oldest first)."""

    def __init__(self, session: ClientSession) -> None:
        self.watches: OrderedDict[str, DiffWatch] = OrderedDict()
        session.closers.append(self.close)

    @classmethod
    def of(cls, session: ClientSession) -> DiffRoom:
        room = session.extra.get(ROOM)
        if not isinstance(room, DiffRoom):
            room = cls(session)
            session.extra[ROOM] = room
        return room

    async def drop(self, subscription_id: str) -> None:
        watch = self.watches.pop(subscription_id, None)
        if watch is not None:
            await watch.close()

    def poke(self) -> None:
        """Refresh every subscription now (after this session changed a checkout)."""
        for watch in self.watches.values():
            watch.changed.set()

    async def close(self) -> None:
        watches = list(self.watches.values())
        self.watches.clear()
        for watch in watches:
            await watch.close()


def poke(session: ClientSession) -> None:
    room = session.extra.get(ROOM)
    if isinstance(room, DiffRoom):
        room.poke()


async def subscribe(session: ClientSession, msg: ck.SubscribeDiff) -> None:
    room = DiffRoom.of(session)
    await room.drop(msg.subscriptionId)
    while len(room.watches) >= MAX_SUBSCRIPTIONS:
        _oldest, watch = room.watches.popitem(last=False)
        await watch.close()
    root: str | None = None
    try:
        status = await session.call("git.status", {"cwd": msg.cwd})
        root = str(status["repoRoot"])
    except RpcFailure:
        root = None  # the first read says why; nothing to watch
    watch = DiffWatch(session, msg, root)
    files, error = await watch.read()
    watch.remember(files, error)
    room.watches[msg.subscriptionId] = watch
    await session.push(
        "subscribe_checkout_diff_response",
        ck.DiffSubscribed(
            subscriptionId=msg.subscriptionId,
            cwd=msg.cwd,
            files=files,
            error=error,
            requestId=msg.requestId,
        ),
    )
    if error is None:
        watch.start()


async def unsubscribe(session: ClientSession, msg: ck.UnsubscribeDiff) -> None:
    await DiffRoom.of(session).drop(msg.subscriptionId)
