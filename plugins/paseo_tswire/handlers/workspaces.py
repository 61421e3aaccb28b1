"""The workspaces and projects sidebar: ``fetch_workspaces_request`` (filtered, sorted, paged,
optionally subscribed), ``open_project_request``, ``archive_workspace_request``, and
``workspace_update`` pushes.

A descriptor joins the workspace record, its project and its agents: the status bucket is the
most urgent of its agents' (a pending permission → ``needs_input``, an error → ``failed``,
running, attention, else ``done``) and ``activityAt`` their latest activity.

A subscribed session follows the daemon's ``workspaces`` stream (any client's opens, renames,
pins, archives and restores, reconciliation's Git facts, ``workspace.status``) and its agents'
record changes (their buckets). A :class:`Feed` turns those into pushes at bounded cost: a
notification only marks its workspace, one pass at a time rebuilds the marked descriptors (a
burst costs one pass), and a descriptor goes out only when it differs from the one last sent,
as the TypeScript daemon's ``lastEmittedByWorkspaceId`` does. A workspace outside the
subscription's filter, archived or gone is a ``remove`` (once) for a client that was sent it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from paseo_hookspecs.agents import RecordChange

from paseo_tswire import projection
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers.workspace_runtime import (
    GITHUB_OFF,
    runtime_of,
    script_status_update,
    scripts_of,
)
from paseo_tswire.models import workspace as wm
from paseo_tswire.port import Failure, as_json

log = logging.getLogger("paseo.tswire")

PRIORITY: dict[str, int] = {"needs_input": 0, "failed": 1, "running": 2, "attention": 3, "done": 4}


def bucket(record: dict[str, Any], pending: int) -> wm.Bucket:
    """One agent's state bucket (the TypeScript daemon's rule)."""
    if pending > 0 or record.get("attentionReason") == "permission":
        return "needs_input"
    if record.get("lastStatus") == "error" or record.get("attentionReason") == "error":
        return "failed"
    if record.get("lastStatus") == "running":
        return "running"
    if record.get("requiresAttention"):
        return "attention"
    return "done"


def descriptor(
    workspace: dict[str, Any],
    project: dict[str, Any] | None,
    agents: list[dict[str, Any]],
    pending: dict[str, int],
) -> wm.Descriptor:
    mine = [
        a
        for a in agents
        if a.get("workspaceId") == workspace["workspaceId"] and not a.get("archivedAt")
    ]
    buckets = [bucket(a, pending.get(str(a["id"]), 0)) for a in mine]
    status: wm.Bucket = min(buckets, key=PRIORITY.__getitem__) if buckets else "done"
    times = [str(t) for a in mine for t in (a.get("lastActivityAt"), a.get("updatedAt")) if t]
    project = project or {}
    kind = workspace.get("kind")
    return wm.Descriptor(
        id=str(workspace["workspaceId"]),
        projectId=str(workspace["projectId"]),
        projectDisplayName=str(project.get("displayName") or workspace.get("displayName") or ""),
        projectRootPath=str(project.get("rootPath") or workspace.get("cwd") or ""),
        workspaceDirectory=str(workspace.get("cwd") or ""),
        projectKind="git" if project.get("kind") == "git" else "non_git",
        workspaceKind=kind if kind in ("local_checkout", "worktree", "directory") else "directory",
        name=str(workspace.get("title") or workspace.get("displayName") or ""),
        archivingAt=None,
        status=status,
        activityAt=max(times) if times else workspace.get("updatedAt"),
        diffStat=None,
        gitRuntime=wm.GitRuntime(
            currentBranch=workspace.get("branch"),
            isPaseoOwnedWorktree=bool(workspace.get("isPaseoOwnedWorktree")),
        )
        if kind in ("local_checkout", "worktree")
        else None,
        githubRuntime=GITHUB_OFF,
        project=projection.placement(str(workspace.get("cwd") or ""), workspace, project or None),
    )


async def _descriptors(session: ClientSession, only: str | None = None) -> list[wm.Descriptor]:
    workspaces = (await session.call("workspace.list", {})).get("workspaces") or []
    projects = {
        p["projectId"]: p for p in (await session.call("project.list", {})).get("projects") or []
    }
    agents = [as_json(record) for record in (await session.agents.list()).items]
    pending = {
        agent_id: len(requests)
        for agent_id, requests in (await session.agents.all_pending_permissions()).items()
    }
    found = []
    for w in (w for w in workspaces if only is None or w["workspaceId"] == only):
        entry = descriptor(w, projects.get(w["projectId"]), agents, pending)
        runtime = await runtime_of(session, w, entry.gitRuntime)
        found.append(
            entry.model_copy(
                update={
                    "scripts": await scripts_of(session, w),
                    "gitRuntime": runtime.git,
                    "diffStat": runtime.diff_stat,
                    "githubRuntime": runtime.github,
                }
            )
        )
    return found


descriptors = _descriptors
"""One workspace's descriptor (``only``) or every one's, for the other handler modules."""


def matches(entry: wm.Descriptor, flt: wm.Filter | None) -> bool:
    """Whether ``entry`` passes a ``fetch_workspaces_request`` filter."""
    if flt is None:
        return True
    query = (flt.query or "").lower()
    return (
        (not query or query in entry.name.lower() or query in entry.projectDisplayName.lower())
        and (flt.projectId is None or entry.projectId == flt.projectId)
        and (flt.idPrefix is None or entry.id.startswith(flt.idPrefix))
    )


def _sort_key(entry: wm.Descriptor, key: str) -> Any:
    if key == "status_priority":
        return PRIORITY[entry.status]
    if key == "activity_at":
        return entry.activityAt or ""
    if key == "name":
        return entry.name.lower()
    return entry.projectId


async def fetch_workspaces(session: ClientSession, msg: wm.FetchRequest) -> None:
    entries = await _descriptors(session)
    entries = [e for e in entries if matches(e, msg.filter)]
    for rule in reversed(msg.sort or [wm.Sort(key="activity_at", direction="desc")]):
        entries.sort(
            key=functools.partial(_sort_key, key=rule.key), reverse=rule.direction == "desc"
        )
    start = (
        int(msg.page.cursor)
        if msg.page is not None and msg.page.cursor and msg.page.cursor.isdigit()
        else 0
    )
    limit = msg.page.limit if msg.page is not None else len(entries)
    page = entries[start : start + limit]
    more = start + limit < len(entries)
    subscription = None
    if msg.subscribe is not None:
        feed = session.extra.get(FEED)
        if not isinstance(feed, Feed):
            feed = Feed(session)
            session.extra[FEED] = feed
            session.listeners.append(feed.on_notification)
            session.record_listeners.append(feed.on_record)
            await session.follow(["workspaces"])
        feed.start(msg.filter, entries)
        subscription = msg.subscribe.subscriptionId or f"workspaces:{session.client_id}"
    await session.push(
        "fetch_workspaces_response",
        wm.FetchWorkspaces(
            requestId=msg.requestId,
            subscriptionId=subscription,
            entries=page,
            pageInfo=wm.PageInfo(
                nextCursor=str(start + limit) if more else None,
                prevCursor=msg.page.cursor if msg.page is not None else None,
                hasMore=more,
            ),
        ),
    )


FEED = "workspaces"
"""The session's :class:`Feed` in ``ClientSession.extra``, once it subscribed."""

Sent = wm.Descriptor | None
"""What a client was last sent of a workspace: its descriptor, or ``None`` for a removal."""


class Feed:
    """A subscribed session's ``workspace_update`` pushes (see the module docstring)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.filter: wm.Filter | None = None
        self.sent: dict[str, Sent] = {}
        self._marked: set[str] = set()
        self._everything = False
        self._pass: asyncio.Task[None] | None = None
        # One send at a time: a slower, older read must not overtake a newer one's push.
        self._sending = asyncio.Lock()

    def start(self, flt: wm.Filter | None, entries: list[wm.Descriptor]) -> None:
        """A (re)subscription: what the client holds now is the listing it was just sent."""
        self.filter = flt
        self.sent = {entry.id: entry for entry in entries}

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "workspace.changed":
            self.mark(str(params["workspace"]["workspaceId"]))
        elif method in ("workspace.removed", "workspace.status"):
            self.mark(str(params["workspaceId"]))
        elif method == "script.changed":
            self.mark(str(params["workspaceId"]))
            await script_status_update(self.session, str(params["workspaceId"]))
        elif method == "project.changed":
            # A project's name is in its workspaces' descriptors: look at every one once.
            self._everything = True
            self._schedule()

    def on_record(self, change: RecordChange) -> None:
        """An agent record changed (told by the session's agent feed, in order)."""
        if change.kind == "deleted":
            # A deleted agent's record (and so its workspace) is gone: look at every one once.
            self._everything = True
            self._schedule()
        elif change.record.workspaceId:
            self.mark(change.record.workspaceId)

    def mark(self, workspace_id: str) -> None:
        self._marked.add(workspace_id)
        self._schedule()

    def _schedule(self) -> None:
        if self._pass is None or self._pass.done():
            self._pass = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        # Marks made while a pass runs are taken by the next round of this loop.
        while self._marked or self._everything:
            marked, self._marked = self._marked, set()
            everything, self._everything = self._everything, False
            try:
                await self.send(None if everything else marked)
            except Failure as exc:  # the session closed meanwhile: nobody to tell
                log.debug("tswire: workspace pushes stopped: %s", exc)
                return
            except Exception:  # one bad descriptor must not end the session's pushes
                log.exception("tswire: cannot push workspace updates")

    async def send(self, ids: set[str] | None) -> None:
        """Push what changed among ``ids`` (``None``: every workspace)."""
        async with self._sending:
            await self._send(ids)

    async def _send(self, ids: set[str] | None) -> None:
        current = {d.id: d for d in await _descriptors(self.session)}
        for workspace_id in sorted(set(current) | set(self.sent) if ids is None else ids):
            found = current.get(workspace_id)
            shown = found if found is not None and matches(found, self.filter) else None
            if workspace_id in self.sent and self.sent[workspace_id] == shown:
                continue
            if shown is None and workspace_id not in self.sent:
                continue  # never shown to this client: nothing to take back
            self.sent[workspace_id] = shown
            if shown is None:
                await self.session.push("workspace_update", wm.Remove(id=workspace_id))
            else:
                await self.session.push("workspace_update", wm.Upsert(workspace=shown))


async def push_workspace(session: ClientSession, workspace_id: str) -> None:
    """Send one workspace's descriptor (or its removal) now, if it changed for a subscribed
    session: this session's own open and archive reach its sidebar right after the reply."""
    feed = session.extra.get(FEED)
    if isinstance(feed, Feed):
        await feed.send({workspace_id})


async def open_project(session: ClientSession, msg: wm.OpenRequest) -> None:
    try:
        opened = await session.call("workspace.open", {"path": msg.cwd})
    except RpcFailure as exc:
        await session.push(
            "open_project_response",
            wm.OpenProject(requestId=msg.requestId, workspace=None, error=exc.message),
        )
        return
    workspace_id = str(opened["workspace"]["workspaceId"])
    found = await _descriptors(session, workspace_id)
    await session.push(
        "open_project_response",
        wm.OpenProject(requestId=msg.requestId, workspace=found[0] if found else None, error=None),
    )
    await push_workspace(session, workspace_id)


async def archive_workspace(session: ClientSession, msg: wm.ArchiveRequest) -> None:
    try:
        archived = await session.call("workspace.archive", {"workspaceId": msg.workspaceId})
    except RpcFailure as exc:
        reply = wm.ArchiveWorkspace(
            requestId=msg.requestId, workspaceId=msg.workspaceId, archivedAt=None, error=exc.message
        )
    else:
        reply = wm.ArchiveWorkspace(
            requestId=msg.requestId,
            workspaceId=msg.workspaceId,
            archivedAt=archived["workspace"].get("archivedAt"),
            error=None,
        )
    await session.push("archive_workspace_response", reply)
    if reply.error is None:
        await push_workspace(session, msg.workspaceId)
