"""Paged agent listings, served by the store.

The daemon holds no per-agent state for agents it is not working with (see
:mod:`paseo.agents.roster`), so a listing is a page of the store's keyset over ``(createdAt,
id)``, oldest or newest first, with the in-memory record of each agent the roster has loaded in
place of the stored one (a change written behind may not be on disk yet). The cursor is the
store's: the key of the last agent returned, so agents created or deleted between pages
neither shift nor repeat the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter, AgentRepository


@dataclass(frozen=True)
class ListFilter:
    include_archived: bool = False
    labels: Mapping[str, str] | None = None
    provider: str | None = None
    workspace_id: str | None = None
    statuses: set[str] | None = None
    id_prefix: str | None = None
    title: str | None = None

    def admits(self, record: AgentRecord) -> bool:
        # Internal agents (metadata generation) are the daemon's, never a listing's.
        if record.internal:
            return False
        if record.archivedAt is not None and not self.include_archived:
            return False
        if self.provider is not None and record.provider != self.provider:
            return False
        if self.workspace_id is not None and record.workspaceId != self.workspace_id:
            return False
        if self.statuses is not None and record.lastStatus not in self.statuses:
            return False
        if self.id_prefix is not None and not record.id.lower().startswith(self.id_prefix.lower()):
            return False
        if self.title is not None and record.title != self.title:
            return False
        labels = self.labels
        return not labels or all(record.labels.get(k) == v for k, v in labels.items())

    def for_store(self) -> AgentFilter:
        return AgentFilter(
            include_archived=self.include_archived,
            workspace_id=self.workspace_id,
            provider=self.provider,
            statuses=None if self.statuses is None else frozenset(self.statuses),
            labels=dict(self.labels or {}),
            id_prefix=self.id_prefix,
            title=self.title,
        )


@dataclass(frozen=True)
class Page:
    records: list[AgentRecord]
    next_cursor: str | None
    total: int | None
    """How many agents match, on a first page (no cursor) only: later pages skip the count."""
    partial: bool = False
    """Answered (with ``now``) from an index the store is still checking in the background:
    agents may be missing (see ``AgentRepository.list_now``)."""


async def list_page(
    agents: AgentRepository,
    loaded: Callable[[str], AgentRecord | None],
    admit: ListFilter,
    *,
    cursor: str | None = None,
    limit: int | None = None,
    newest_first: bool = False,
    now: bool = False,
) -> Page:
    """One page of at most ``limit`` agents (every matching agent without a limit, fetched a
    store page at a time). ``loaded`` gives the in-memory record of a loaded agent; one that no
    longer matches ``admit`` is left out of its page. ``InvalidParams`` for a bad cursor.
    ``now``: answer at once, flagged partial, while the store completes its index (a client's
    listing) instead of waiting for it."""
    flt = admit.for_store()
    records: list[AgentRecord] = []
    next_cursor = cursor
    partial = False
    while True:
        page = await (agents.list_now if now else agents.list)(
            flt,
            cursor=next_cursor,
            limit=MAX_PAGE_SIZE if limit is None else limit,
            newest_first=newest_first,
        )
        for stored in page.items:
            record = loaded(stored.id) or stored
            if record is stored or admit.admits(record):
                records.append(record)
        partial = partial or page.partial
        next_cursor = page.next_cursor
        if next_cursor is None or limit is not None:
            break
    total = None
    if cursor is None:
        if next_cursor is None:
            total = len(records)
        else:
            total = await (agents.count_now if now else agents.count)(flt)
    return Page(records, next_cursor, total, partial)
