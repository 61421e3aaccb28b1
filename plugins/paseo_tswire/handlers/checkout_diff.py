"""``subscribe_checkout_diff_request`` / ``unsubscribe_checkout_diff_request``: a live diff of
a checkout, pushed as ``checkout_diff_update`` whenever it changes.

Each subscription is a :class:`~paseo_tswire.handlers.checkout_watch.TreeWatch` of its
checkout (``watchfiles``, the library the daemon's reconciliation already uses): a burst of
events is one refresh, a refresh is one ``git.diff`` call through the session (so with its
access, under the daemon's Git limiter), and only a diff that differs from the last one pushed
is sent. At most :data:`MAX_SUBSCRIPTIONS` run per session (the oldest is ended for a new
one); all of a session's end when it closes.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers.checkout_watch import TreeWatch
from paseo_tswire.models import checkout as ck

ROOM = "checkout_diffs"
MAX_SUBSCRIPTIONS = 16


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


class DiffWatch(TreeWatch):
    """One subscription."""

    def __init__(self, session: ClientSession, msg: ck.SubscribeDiff, root: str | None) -> None:
        super().__init__(root)
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
        self.last: str | None = None

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

    async def refresh(self) -> None:
        files, error = await self.read()
        if not self.stop.is_set() and self.remember(files, error):
            await self.session.push(
                "checkout_diff_update",
                ck.DiffUpdate(
                    subscriptionId=self.subscription_id, cwd=self.cwd, files=files, error=error
                ),
            )


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
