"""Paged agent listings: a keyset over ``(createdAt, id)`` the roster keeps sorted.

A page costs the agents it visits, not a sort of every agent: the index is kept in order as
agents are adopted (a new agent is the newest, so this appends), and ids no longer known
(deleted agents) are skipped and dropped when a full count passes over them. The cursor is
the key of the last agent returned, so agents created or deleted between pages neither shift
nor repeat the rest.
"""

from __future__ import annotations

import base64
import bisect
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import AgentRecord

Key = tuple[str, str]
"""``(createdAt, id)``: the listing order."""


@dataclass(frozen=True)
class ListFilter:
    include_archived: bool = False
    labels: Mapping[str, str] | None = None
    provider: str | None = None
    workspace_id: str | None = None
    statuses: set[str] | None = None

    def admits(self, record: AgentRecord) -> bool:
        if record.archivedAt is not None and not self.include_archived:
            return False
        if self.provider is not None and record.provider != self.provider:
            return False
        if self.workspace_id is not None and record.workspaceId != self.workspace_id:
            return False
        if self.statuses is not None and record.lastStatus not in self.statuses:
            return False
        labels = self.labels
        return not labels or all(record.labels.get(k) == v for k, v in labels.items())


@dataclass(frozen=True)
class Page:
    records: list[AgentRecord]
    next_cursor: str | None
    total: int | None
    """How many agents match, on a first page (no cursor) only: later pages skip the count."""


def encode_cursor(key: Key) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> Key:
    problem = InvalidParams(
        "invalid cursor: pass back the nextCursor of the previous agent.list page"
    )
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except ValueError as exc:
        raise problem from exc
    match raw:
        case [str(created), str(agent_id)]:
            return created, agent_id
    raise problem


class AgentIndex:
    """Listing keys in order; records are looked up through ``lookup`` (``None``: gone)."""

    def __init__(self, lookup: Callable[[str], AgentRecord | None]) -> None:
        self._lookup = lookup
        self._keys: list[Key] = []

    def add(self, record: AgentRecord) -> None:
        key = (record.createdAt, record.id)
        if not self._keys or self._keys[-1] < key:
            self._keys.append(key)
            return
        position = bisect.bisect_left(self._keys, key)
        # An agent restored from the trash may still have its key here (dropped lazily).
        if position == len(self._keys) or self._keys[position] != key:
            self._keys.insert(position, key)

    def _walk(self, start: Key | None, newest_first: bool) -> Iterator[tuple[Key, AgentRecord]]:
        keys = self._keys
        if newest_first:
            end = len(keys) if start is None else bisect.bisect_left(keys, start)
            positions: range = range(end - 1, -1, -1)
        else:
            begin = 0 if start is None else bisect.bisect_right(keys, start)
            positions = range(begin, len(keys))
        for position in positions:
            key = keys[position]
            record = self._lookup(key[1])
            if record is not None:
                yield key, record

    def count(self, admit: ListFilter) -> int:
        """Matching agents; drops the keys of deleted agents on the way."""
        live: list[Key] = []
        total = 0
        for key in self._keys:
            record = self._lookup(key[1])
            if record is None:
                continue
            live.append(key)
            total += admit.admits(record)
        self._keys = live
        return total

    def page(
        self,
        admit: ListFilter,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> Page:
        start = decode_cursor(cursor) if cursor is not None else None
        records: list[AgentRecord] = []
        next_cursor = None
        last: Key | None = None
        for key, record in self._walk(start, newest_first):
            if not admit.admits(record):
                continue
            if limit is not None and len(records) == limit:
                assert last is not None
                next_cursor = encode_cursor(last)
                break
            records.append(record)
            last = key
        total = None
        if cursor is None:
            total = len(records) if next_cursor is None else self.count(admit)
        return Page(records, next_cursor, total)
