"""``checkout_status_response`` payloads from ``git.status``, and ``checkout_status_update``
pushes for the checkouts a session asked the status of.

The app caches a checkout's status for good (``staleTime: Infinity``) and counts on
``checkout_status_update`` to refresh it, so after a ``checkout_status_request`` the session
watches that checkout (:class:`~paseo_tswire.handlers.checkout_watch.TreeWatch`) and pushes a
new status whenever it differs from the last one sent — after a file changes, a commit made in
a terminal, or this session's own commits, switches and pulls. At most :data:`MAX_WATCHED`
checkouts per session (the least recently asked is dropped); they end with the session.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers.checkout_diff import error_of
from paseo_tswire.handlers.checkout_watch import TreeWatch
from paseo_tswire.models import checkout as ck
from paseo_tswire.models.wire import Wire

ROOM = "checkout_status"
MAX_WATCHED = 16


def not_git(cwd: str, request_id: str, error: ck.CheckoutError | None) -> ck.StatusNotGit:
    return ck.StatusNotGit(
        cwd=cwd,
        error=error,
        requestId=request_id,
        isGit=False,
        isPaseoOwnedWorktree=False,
        repoRoot=None,
        currentBranch=None,
        isDirty=None,
        baseRef=None,
        aheadBehind=None,
        aheadOfOrigin=None,
        behindOfOrigin=None,
        hasRemote=False,
        remoteUrl=None,
    )


def payload(cwd: str, request_id: str, found: dict[str, Any]) -> ck.StatusGit | ck.StatusPaseo:
    """The status payload of a ``git.status`` result."""
    base = found.get("base")
    common: dict[str, Any] = {
        "cwd": cwd,
        "error": None,
        "requestId": request_id,
        "isGit": True,
        "repoRoot": found["repoRoot"],
        "currentBranch": found["branch"],
        "isDirty": bool(found["dirty"]),
        "aheadBehind": ck.AheadBehind(ahead=base["ahead"], behind=base["behind"]) if base else None,
        "aheadOfOrigin": found["ahead"],
        "behindOfOrigin": found["behind"],
        "hasRemote": found["remoteUrl"] is not None,
        "remoteUrl": found["remoteUrl"],
    }
    if found["isPaseoOwnedWorktree"] and found.get("baseRef"):
        return ck.StatusPaseo(
            **common,
            isPaseoOwnedWorktree=True,
            mainRepoRoot=found["mainRepoRoot"],
            baseRef=found["baseRef"],
        )
    return ck.StatusGit(
        **common,
        isPaseoOwnedWorktree=False,
        mainRepoRoot=found["mainRepoRoot"],
        baseRef=found.get("baseRef"),
    )


async def read(session: ClientSession, cwd: str, request_id: str) -> tuple[Wire, str | None]:
    """The status payload of ``cwd`` and the checkout root to watch (``None``: not a
    checkout, or not one this session may read)."""
    try:
        found = await session.call("git.status", {"cwd": cwd})
    except RpcFailure as exc:
        # A directory outside any checkout is a plain "not git" answer, as the TypeScript
        # daemon gives; anything else says what went wrong.
        error = None if exc.code == "not_git_repo" else error_of(exc)
        return not_git(cwd, request_id, error), None
    return payload(cwd, request_id, found), str(found["repoRoot"])


def _key(value: Wire) -> str:
    data = value.wire()
    data.pop("requestId", None)
    return json.dumps(data, sort_keys=True)


class StatusWatch(TreeWatch):
    def __init__(self, session: ClientSession, cwd: str, root: str, sent: Wire) -> None:
        super().__init__(root)
        self.session = session
        self.cwd = cwd
        self.last = _key(sent)

    async def refresh(self) -> None:
        # The TypeScript daemon's request id for pushed statuses.
        value, _root = await read(self.session, self.cwd, f"subscription:{self.cwd}")
        key = _key(value)
        if self.stop.is_set() or key == self.last:
            return
        self.last = key
        await self.session.push("checkout_status_update", value)


class StatusRoom:
    """The checkouts whose status this session follows (least recently asked first)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.watches: OrderedDict[str, StatusWatch] = OrderedDict()
        session.closers.append(self.close)

    @classmethod
    def of(cls, session: ClientSession) -> StatusRoom:
        room = session.extra.get(ROOM)
        if not isinstance(room, StatusRoom):
            room = cls(session)
            session.extra[ROOM] = room
        return room

    async def follow(self, cwd: str, root: str, sent: Wire) -> None:
        watch = self.watches.get(cwd)
        if watch is not None:
            watch.last = _key(sent)
            self.watches.move_to_end(cwd)
            return
        while len(self.watches) >= MAX_WATCHED:
            _oldest, dropped = self.watches.popitem(last=False)
            await dropped.close()
        watch = StatusWatch(self.session, cwd, root, sent)
        self.watches[cwd] = watch
        watch.start()

    async def close(self) -> None:
        watches = list(self.watches.values())
        self.watches.clear()
        for watch in watches:
            await watch.close()


def poke(session: ClientSession) -> None:
    room = session.extra.get(ROOM)
    if isinstance(room, StatusRoom):
        for watch in room.watches.values():
            watch.poke()


async def status(session: ClientSession, msg: ck.CwdRequest) -> None:
    value, root = await read(session, msg.cwd, msg.requestId)
    await session.push("checkout_status_response", value)
    if root is not None:
        await StatusRoom.of(session).follow(msg.cwd, root, value)
