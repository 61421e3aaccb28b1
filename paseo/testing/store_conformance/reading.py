"""Reading a whole store: every page of a listing, and a snapshot of everything held."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.plugin_records import PluginRecord, PluginRecordRepository, PluginRecordStore
from paseo_hookspecs.records import (
    dump_record,
)
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter, Page

T = TypeVar("T")


async def collect_pages(
    fetch: Callable[[str | None], Awaitable[Page[T]]], *, max_pages: int = 100_000
) -> list[T]:
    """Every item of a cursor listing, following ``next_cursor`` until it is ``None``."""
    items: list[T] = []
    cursor: str | None = None
    for _ in range(max_pages):
        page = await fetch(cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor
    raise AssertionError(f"listing did not end within {max_pages} pages")


async def snapshot(store: Store) -> dict[str, Any]:
    """Everything ``store`` holds, as JSON-ready data (records via ``dump_record``), tombstoned
    agents and the trash's cleanup queue (its first page) included.

    Ordered listings (agents, schedules, projects, workspaces, labels) keep their order; sets and
    maps without a defined order (push tokens, managed processes, plugin sources) are sorted.
    """
    agents = await collect_pages(
        lambda c: store.agents.list(
            AgentFilter(include_archived=True, trashed=None), cursor=c, limit=MAX_PAGE_SIZE
        )
    )
    timelines: dict[str, Any] = {}
    for agent in agents:
        entries = await store.timeline.read(agent.id)
        if entries:
            timelines[agent.id] = [dump_record(e) for e in entries]
    schedules = await collect_pages(lambda c: store.schedules.list(cursor=c, limit=MAX_PAGE_SIZE))
    projects = await collect_pages(
        lambda c: store.projects.list(include_archived=True, cursor=c, limit=MAX_PAGE_SIZE)
    )
    workspaces = await collect_pages(
        lambda c: store.workspaces.list(include_archived=True, cursor=c, limit=MAX_PAGE_SIZE)
    )
    processes = await store.managed_processes.list()
    sources = await store.plugin_sources.list()
    usage_repository = getattr(store, "usage", None)
    # Per source: the crash harness gives every usage record a source of its own.
    usage = (
        [t.to_json() for t in await usage_repository.query(group_by="schedule")]
        if usage_repository is not None
        else []
    )
    return {
        "agents": [dump_record(a) for a in agents],
        "timelines": timelines,
        "schedules": [dump_record(s) for s in schedules],
        "projects": [dump_record(p) for p in projects],
        "workspaces": [dump_record(w) for w in workspaces],
        "labels": [dump_record(label) for label in await store.labels.list()],
        "push_tokens": sorted(await store.push_tokens.list()),
        "managed_processes": sorted(
            (dump_record(p) for p in processes), key=lambda p: str(p["id"])
        ),
        "plugin_sources": {k: dump_record(v) for k, v in sorted(sources.items())},
        "usage": usage,
        "plugin_records": await _plugin_records(store),
        "trash": {
            "queued": [dump_record(i) for i in await store.trash.queued(limit=MAX_PAGE_SIZE)],
            "lastSweep": await store.trash.last_sweep(),
        },
    }


async def _plugin_records(store: Store) -> dict[str, Any]:
    """Every plugin record's value by ``namespace/collection/id`` (``{}`` on a store that keeps
    none); revisions are left out: a copy into another store starts them again."""
    records: PluginRecordStore | None = getattr(store, "plugin_records", None)
    found: dict[str, Any] = {}
    if records is None:
        return found
    for namespace, collection in await records.collections():
        repository = records.collection(namespace, collection)
        for record in await collect_pages(functools.partial(_page, repository)):
            found[f"{namespace}/{collection}/{record.id}"] = record.value
    return found


async def _page(repository: PluginRecordRepository, cursor: str | None) -> Page[PluginRecord]:
    return await repository.list(cursor=cursor, limit=MAX_PAGE_SIZE)
