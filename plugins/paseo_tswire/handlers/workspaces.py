"""The workspaces and projects sidebar: ``fetch_workspaces_request`` (filtered, sorted, paged,
optionally subscribed), ``open_project_request``, ``archive_workspace_request``, and
``workspace_update`` pushes.

A descriptor joins the workspace record, its project and its agents: the status bucket is the
most urgent of its agents' (a pending permission → ``needs_input``, an error → ``failed``,
running, attention, else ``done``) and ``activityAt`` their latest activity. This daemon
publishes no workspace stream, so pushes follow the agents: an agent created, changed or
deleted re-sends its workspace, as do this session's own opens and archives.
"""

from __future__ import annotations

import functools
from typing import Any

from paseo_tswire import projection
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import workspace as wm

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
        gitRuntime=wm.GitRuntime(
            currentBranch=workspace.get("branch"),
            isPaseoOwnedWorktree=bool(workspace.get("isPaseoOwnedWorktree")),
        )
        if kind in ("local_checkout", "worktree")
        else None,
        githubRuntime=None,
        project=projection.placement(str(workspace.get("cwd") or ""), workspace, project or None),
    )


async def _descriptors(session: ClientSession, only: str | None = None) -> list[wm.Descriptor]:
    workspaces = (await session.call("workspace.list", {})).get("workspaces") or []
    projects = {
        p["projectId"]: p for p in (await session.call("project.list", {})).get("projects") or []
    }
    agents = (await session.call("agent.list", {})).get("agents") or []
    pending: dict[str, int] = {}
    for item in (await session.call("agent.permissions.list", {})).get("requests") or []:
        pending[str(item["agentId"])] = pending.get(str(item["agentId"]), 0) + 1
    return [
        descriptor(w, projects.get(w["projectId"]), agents, pending)
        for w in workspaces
        if only is None or w["workspaceId"] == only
    ]


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
    flt = msg.filter
    if flt is not None:
        query = (flt.query or "").lower()
        entries = [
            e
            for e in entries
            if (not query or query in e.name.lower() or query in e.projectDisplayName.lower())
            and (flt.projectId is None or e.projectId == flt.projectId)
            and (flt.idPrefix is None or e.id.startswith(flt.idPrefix))
        ]
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
        if not session.extra.get("workspaces"):
            session.listeners.append(functools.partial(on_notification, session))
        session.extra["workspaces"] = True
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


async def push_workspace(session: ClientSession, workspace_id: str) -> None:
    """Send one workspace's descriptor (or its removal) to a subscribed session."""
    if not session.extra.get("workspaces"):
        return
    found = await _descriptors(session, workspace_id)
    if found:
        await session.push("workspace_update", wm.Upsert(workspace=found[0]))
    else:
        await session.push("workspace_update", wm.Remove(id=workspace_id))


async def on_notification(session: ClientSession, method: str, params: dict[str, Any]) -> None:
    """Agent changes re-send their workspace (see the module docstring)."""
    if method in ("agent.created", "agent.updated") and session.extra.get("workspaces"):
        workspace_id = params["agent"].get("workspaceId")
        if workspace_id:
            await push_workspace(session, str(workspace_id))


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
