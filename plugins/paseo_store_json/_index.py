"""What the JSON store keeps in memory of a one-file-per-record collection: a compact index.

Each record is an index row (``__slots__``, interned repeated strings): its sort key, its
file, and the few fields listings filter on. Full records are read from their file on demand
and kept in a :class:`RecordCache` bounded by count, so memory no longer grows with the
record's size (10,000 closed agents cost a few MiB instead of ~80 MiB).
"""

from __future__ import annotations

import bisect
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from typing import Any, Generic, Protocol, TypeVar

from paseo_hookspecs.records import AgentRecord, CleanupItem, ScheduleRecord
from paseo_hookspecs.store import AgentFilter
from pydantic import BaseModel, ConfigDict, create_model

M = TypeVar("M", bound=BaseModel)

DEFAULT_CACHE_RECORDS = 256
"""Full records kept per collection (the newest read or written). A listing page is read from
the files, so this only spares re-reading the records being worked on."""

_intern = sys.intern


def index_fields(model: type[BaseModel], names: tuple[str, ...]) -> type[BaseModel]:
    """A model of just ``names`` of ``model`` (same types, defaults and strictness), every
    other key ignored.

    Opening a home validates each record file with it: pydantic then checks the JSON and the
    indexed fields without building the record's nested models (several times faster than
    the full model, and faster than ``json.loads``). The rest of a record is validated when
    it is first read in full, which quarantines a file that fails then.
    """
    declared = model.model_fields
    fields: dict[str, Any] = {name: (declared[name].annotation, declared[name]) for name in names}
    return create_model(
        f"{model.__name__}IndexFields",
        __config__=ConfigDict(extra="ignore", strict=True, defer_build=True),
        **fields,
    )


AGENT_INDEX_FIELDS = index_fields(
    AgentRecord,
    (
        "id",
        "cwd",
        "createdAt",
        "workspaceId",
        "provider",
        "lastStatus",
        "archivedAt",
        "requiresAttention",
        "labels",
        "title",
        "deletedAt",
    ),
)
SCHEDULE_INDEX_FIELDS = index_fields(ScheduleRecord, ("id", "createdAt", "status"))


class Row(Protocol):
    """What every index row has: the listing key and the record's file."""

    id: str
    createdAt: str
    path: str


R = TypeVar("R", bound=Row)


class PlainRow:
    """An index row that filters on nothing (managed processes)."""

    __slots__ = ("createdAt", "id", "path")

    def __init__(self, record: Any, path: str) -> None:
        self.id: str = record.id
        self.createdAt: str = str(getattr(record, "createdAt", ""))
        self.path: str = path


class CleanupRow:
    """A queued trash cleanup item in the index: which tombstone its purge removed (an open
    finishes a purge whose tombstone is still on disk, see
    :func:`paseo_store_json._load.finish_purges`)."""

    __slots__ = ("agentId", "createdAt", "deletedAt", "id", "path")

    def __init__(self, record: CleanupItem, path: str) -> None:
        self.id: str = record.id
        self.createdAt: str = record.createdAt
        self.path: str = path
        self.agentId: str = record.agentId
        self.deletedAt: str = record.deletedAt


class ScheduleRow:
    """A schedule in the index: listings filter on ``status``."""

    __slots__ = ("createdAt", "id", "path", "status")

    def __init__(self, record: ScheduleRecord | Any, path: str) -> None:
        self.id: str = record.id
        self.createdAt: str = record.createdAt
        self.path: str = path
        self.status: str = _intern(record.status)


class AgentRow:
    """An agent in the index: every field an :class:`AgentFilter` reads, and the title (names
    resolve by title). ``deletedAt`` is kept whole, not as a flag: an interrupted purge is
    recognised by its cleanup item's ``deletedAt`` matching the tombstone's."""

    __slots__ = (
        "archived",
        "attention",
        "createdAt",
        "deletedAt",
        "id",
        "labels",
        "path",
        "provider",
        "status",
        "title",
        "workspaceId",
    )

    def __init__(self, record: AgentRecord | Any, path: str) -> None:
        self.id: str = record.id
        self.createdAt: str = record.createdAt
        self.path: str = path
        self.workspaceId: str | None = (
            None if record.workspaceId is None else _intern(record.workspaceId)
        )
        self.provider: str = _intern(record.provider)
        self.status: str = _intern(record.lastStatus)
        self.archived: bool = record.archivedAt is not None
        self.attention: bool = bool(record.requiresAttention)
        self.labels: tuple[tuple[str, str], ...] = tuple(
            (_intern(key), value) for key, value in record.labels.items()
        )
        self.title: str | None = record.title
        self.deletedAt: str | None = record.deletedAt

    @classmethod
    def from_fields(cls, fields: Sequence[Any], path: str) -> AgentRow:
        """A row from its stored fields (the durable index, :mod:`paseo_store_json._index_file`:
        in :meth:`stored_fields` order), interned as a row built from a
        record is. ``TypeError``/``ValueError`` when they are not a row's."""
        (agent_id, created, _path, workspace, provider, status, archived, attention, labels,
         title, deleted) = fields
        if not isinstance(agent_id, str) or not isinstance(created, str):
            raise TypeError("a row's id and createdAt are strings")
        row = cls.__new__(cls)
        row.id = agent_id
        row.createdAt = created
        row.path = path
        row.workspaceId = None if workspace is None else _intern(workspace)
        row.provider = _intern(provider)
        row.status = _intern(status)
        row.archived = bool(archived)
        row.attention = bool(attention)
        row.labels = tuple((_intern(key), value) for key, value in labels)
        row.title = title
        row.deletedAt = deleted
        return row

    def stored_fields(self, path: str) -> list[Any]:
        """What :meth:`from_fields` reads back (``path`` as the file stores it)."""
        return [
            self.id,
            self.createdAt,
            path,
            self.workspaceId,
            self.provider,
            self.status,
            self.archived,
            self.attention,
            self.labels,
            self.title,
            self.deletedAt,
        ]

    def same(self, other: AgentRow) -> bool:
        """Whether ``other`` indexes the record exactly as this row does."""
        return all(getattr(self, name) == getattr(other, name) for name in AgentRow.__slots__)

    def matches(self, flt: AgentFilter) -> bool:
        if self.archived and not flt.include_archived:
            return False
        if flt.trashed is not None and (self.deletedAt is not None) != flt.trashed:
            return False
        if flt.workspace_id is not None and self.workspaceId != flt.workspace_id:
            return False
        if flt.without_workspace and self.workspaceId is not None:
            return False
        if flt.provider is not None and self.provider != flt.provider:
            return False
        if flt.statuses is not None and self.status not in flt.statuses:
            return False
        if flt.labels and not all(pair in self.labels for pair in flt.labels.items()):
            return False
        if flt.id_prefix is not None and not self.id.lower().startswith(flt.id_prefix.lower()):
            return False
        if flt.title is not None and self.title != flt.title:
            return False
        return flt.requires_attention is None or self.attention == flt.requires_attention


Facet = str | tuple[str, str]
"""A value rows are looked up by without a walk: a status, or a label's ``(key, value)``
(a string and a pair never collide)."""


RESTING_STATUS = "closed"
"""The status most agents have (every agent without a process): not a facet, as its set would
cost memory (2 MiB at 50,000 agents) and never be selective enough to walk instead of rows."""


NO_WORKSPACE = "\0no-workspace"
TRASHED = "\0trashed"
"""Facets of the rare rows two start-up searches look for (records an older program wrote
without a workspace; tombstones): without them each search walked every row. Neither can be
a status (a NUL is in none)."""


def agent_facets(row: AgentRow) -> tuple[Facet, ...]:
    """The facets of an agent row: its status (unless resting), each of its labels, and
    whether it has no workspace or is a tombstone."""
    facets: tuple[Facet, ...] = row.labels if row.status == RESTING_STATUS else (
        row.status,
        *row.labels,
    )
    if row.workspaceId is None:
        facets = (*facets, NO_WORKSPACE)
    if row.deletedAt is not None:
        facets = (*facets, TRASHED)
    return facets


class SortedIndex(Generic[R]):
    """Rows by id, plus their ``(createdAt, id)`` keys in order for cursor pagination.

    With ``facets``, the ids of the rows having each facet are kept too, so a listing that
    filters on one (start-up's searches for live or specially labelled agents among 50,000
    closed ones) costs what it finds, not a walk of every row.
    """

    def __init__(self, facets: Callable[[R], tuple[Facet, ...]] | None = None) -> None:
        self.rows: dict[str, R] = {}
        self.keys: list[tuple[str, str]] = []
        self._facets = facets
        self._by_facet: dict[Facet, set[str]] = {}

    def load(self, rows: Iterable[R]) -> None:
        """Fill an empty index (one sort instead of one insertion per row)."""
        for row in rows:
            self.rows[row.id] = row
        if self._facets is not None:
            # One pass with everything local: this runs for every row at open.
            facets, by_facet = self._facets, self._by_facet
            for row_id, row in self.rows.items():
                for facet in facets(row):
                    ids = by_facet.get(facet)
                    if ids is None:
                        by_facet[facet] = {row_id}
                    else:
                        ids.add(row_id)
        self.keys = sorted((row.createdAt, row.id) for row in self.rows.values())

    def put(self, row: R) -> None:
        """Insert or replace ``row``."""
        old = self.rows.get(row.id)
        if old is not None:
            del self.keys[bisect.bisect_left(self.keys, (old.createdAt, old.id))]
            self._drop_facets(old)
        self.rows[row.id] = row
        self._add_facets(row)
        bisect.insort(self.keys, (row.createdAt, row.id))

    def pop(self, row_id: str) -> R | None:
        row = self.rows.pop(row_id, None)
        if row is not None:
            del self.keys[bisect.bisect_left(self.keys, (row.createdAt, row.id))]
            self._drop_facets(row)
        return row

    def having(self, facet: Facet) -> Set[str]:
        """The ids of the rows with ``facet`` (read only; empty without facets)."""
        return self._by_facet.get(facet, _NONE)

    def _add_facets(self, row: R) -> None:
        if self._facets is not None:
            for facet in self._facets(row):
                self._by_facet.setdefault(facet, set()).add(row.id)

    def _drop_facets(self, row: R) -> None:
        if self._facets is None:
            return
        for facet in self._facets(row):
            ids = self._by_facet.get(facet)
            if ids is not None:
                ids.discard(row.id)
                if not ids:
                    del self._by_facet[facet]

    def walk(
        self,
        cursor_key: tuple[str, str] | None,
        *,
        descending: bool = False,
        among: Set[str] | None = None,
    ) -> Iterator[tuple[tuple[str, str], R]]:
        """Rows strictly after ``cursor_key`` in key order (before it, newest first, with
        ``descending``); only those whose id is in ``among`` when given (then sorted on the
        spot, so ``among`` should be small next to the index)."""
        rows = self.rows
        keys = (
            self.keys
            if among is None
            else sorted((rows[row_id].createdAt, row_id) for row_id in among if row_id in rows)
        )
        if descending:
            end = len(keys) if cursor_key is None else bisect.bisect_left(keys, cursor_key)
            positions: range = range(end - 1, -1, -1)
        else:
            start = 0 if cursor_key is None else bisect.bisect_right(keys, cursor_key)
            positions = range(start, len(keys))
        for index in positions:
            key = keys[index]
            yield key, rows[key[1]]


_NONE: frozenset[str] = frozenset()


def agent_candidates(index: SortedIndex[AgentRow], flt: AgentFilter) -> Set[str] | None:
    """A small superset of the ids ``flt`` admits, from the facets it names; ``None`` when
    walking every row is as cheap (no faceted criterion, or one most rows have)."""
    groups: list[Set[str]] = [index.having(pair) for pair in flt.labels.items()]
    if flt.without_workspace:
        groups.append(index.having(NO_WORKSPACE))
    if flt.trashed is True:
        groups.append(index.having(TRASHED))
    if flt.statuses is not None and RESTING_STATUS not in flt.statuses:
        statuses = [index.having(status) for status in flt.statuses]
        groups.append(statuses[0] if len(statuses) == 1 else set().union(*statuses))
    if not groups:
        return None
    groups.sort(key=len)
    # A walk stops at the first page's end; sorting the candidates pays off only when they
    # are few next to the rows.
    if len(groups[0]) * _SELECTIVE > len(index.rows):
        return None
    if len(groups) == 1:
        return groups[0]
    return set(groups[0]).intersection(*groups[1:])


_SELECTIVE = 8
"""Candidates are used when at most one row in this many has the rarest named facet."""


class RecordCache(Generic[M]):
    """The most recently used full records, at most ``capacity`` of them."""

    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("a record cache holds zero or more records")
        self.capacity = capacity
        self._records: OrderedDict[str, M] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def get(self, row_id: str) -> M | None:
        record = self._records.get(row_id)
        if record is not None:
            self._records.move_to_end(row_id)
        return record

    def put(self, row_id: str, record: M) -> None:
        if self.capacity == 0:
            return
        self._records[row_id] = record
        self._records.move_to_end(row_id)
        while len(self._records) > self.capacity:
            self._records.popitem(last=False)

    def drop(self, row_id: str) -> None:
        self._records.pop(row_id, None)


__all__ = [
    "AGENT_INDEX_FIELDS",
    "DEFAULT_CACHE_RECORDS",
    "SCHEDULE_INDEX_FIELDS",
    "AgentRow",
    "CleanupRow",
    "Facet",
    "PlainRow",
    "RecordCache",
    "Row",
    "ScheduleRow",
    "SortedIndex",
    "agent_candidates",
    "agent_facets",
]
