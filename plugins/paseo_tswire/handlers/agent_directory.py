"""``fetch_agents_request`` with ``sort``, ``filter.projectKeys`` or
``filter.requiresAttention``: the TypeScript daemon sorts and filters the whole directory
before it cuts a page, so a page of 50 "needs attention" agents of one project holds 50 of
them, not the few that happened to be among the 50 newest.

Such a request reads the session's agents (at most :data:`MAX_AGENTS`), builds their snapshots
and placements, filters, sorts (the keys in order, the id last, as the TypeScript pager) and
pages by offset: its cursor is the offset of the next entry. A plain request keeps the agent
port's own paging (``handlers/agents.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from paseo_hookspecs.agents import AgentQuery

from paseo_tswire import projection
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import inbound as req
from paseo_tswire.models import messages as out
from paseo_tswire.port import as_json

MAX_AGENTS = 10_000
"""Agents read for one sorted request (the directory's bound)."""

Snapshots = Callable[[ClientSession, list[dict[str, Any]]], Awaitable[list[out.DirectoryEntry]]]


def needs_full_read(msg: req.FetchAgents) -> bool:
    flt = msg.filter
    return bool(msg.sort) or (
        flt is not None and (flt.projectKeys is not None or flt.requiresAttention is not None)
    )


def status_priority(entry: out.DirectoryEntry) -> int:
    """The TypeScript daemon's ``getStatusPriority``."""
    agent = entry.agent
    if agent.pendingPermissions or agent.attentionReason == "permission":
        return 0
    if agent.status == "error" or agent.attentionReason == "error":
        return 1
    if agent.status == "running":
        return 2
    if agent.status == "initializing":
        return 3
    return 4


def _time(value: str) -> float:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _value(entry: out.DirectoryEntry, key: str) -> Any:
    if key == "status_priority":
        return status_priority(entry)
    if key == "created_at":
        return _time(entry.agent.createdAt)
    if key == "updated_at":
        return _time(entry.agent.updatedAt)
    return (entry.agent.title or "").lower()


def sort_entries(entries: list[out.DirectoryEntry], sort: list[req.AgentSort]) -> None:
    """Stable multi-key sort, the id breaking ties (ascending, as the TypeScript pager)."""
    entries.sort(key=lambda e: e.agent.id)
    for rule in reversed(sort):
        entries.sort(key=functools.partial(_value, key=rule.key), reverse=rule.direction == "desc")


async def full_directory(
    session: ClientSession, msg: req.FetchAgents, snapshots: Snapshots
) -> tuple[list[out.DirectoryEntry], out.PageInfo]:
    flt = msg.filter
    query: dict[str, Any] = {"newest_first": True}
    if flt is not None:
        if flt.includeArchived and msg.scope != "active":
            query["include_archived"] = True
        if flt.labels:
            query["labels"] = flt.labels
        if flt.statuses:
            query["statuses"] = frozenset(s for s in flt.statuses if s in projection.STATUSES)
    records: list[dict[str, Any]] = []
    cursor: str | None = None
    while len(records) < MAX_AGENTS:
        found = await session.agents.list(AgentQuery(**query), cursor=cursor, limit=200)
        records.extend(as_json(r) for r in found.items)
        cursor = found.next_cursor
        if cursor is None:
            break
    if flt is not None and flt.requiresAttention is not None:
        records = [r for r in records if bool(r.get("requiresAttention")) == flt.requiresAttention]
    entries = await snapshots(session, records)
    if flt is not None and flt.projectKeys is not None:
        keys = set(flt.projectKeys)
        entries = [e for e in entries if e.project.projectKey in keys]
    sort_entries(entries, msg.sort or [req.AgentSort(key="updated_at", direction="desc")])
    page = msg.page
    start = int(page.cursor) if page is not None and page.cursor and page.cursor.isdigit() else 0
    limit = page.limit if page is not None else 200
    chosen = entries[start : start + limit]
    more = start + limit < len(entries)
    return chosen, out.PageInfo(
        nextCursor=str(start + limit) if more else None,
        prevCursor=page.cursor if page is not None else None,
        hasMore=more,
    )
