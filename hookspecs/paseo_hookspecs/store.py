"""The store contract: one repository per record kind.

Every method is shaped like one SQL statement or one SQL transaction, even on a JSON-file
driver. Callers never read-merge-write: they say what to change and under which condition
(compare-and-set), and the store does it atomically. Queues, locks and uniqueness checks live
behind these methods.

Durability: when a mutating method returns, its effect survives a crash (SIGKILL, power loss
on a filesystem that honours fsync). When it raises, nothing changed. ``StorageError`` reports
an I/O failure (disk full, permission denied) with the previous state intact.

Reads return validated record models (see :mod:`paseo_hookspecs.records`). Listing is stable
cursor pagination: a cursor names the last row seen, so rows inserted or deleted meanwhile
never cause a row to be skipped or repeated.

Rules every driver follows (the conformance suite in :mod:`paseo.testing.store_conformance`
checks them):

- A malformed cursor raises ``InvalidParams`` on every listing; a ``limit`` above
  :data:`MAX_PAGE_SIZE` is clamped; a page shorter than ``limit`` has ``next_cursor=None``.
- ``AgentFilter(requires_attention=False)`` also matches agents without the field.
- A ``None`` change removes a field that may be omitted but never be null, and stores ``null``
  otherwise.
- Labels are looked up by identity; assignments store the catalog's display name.
- An agent whose ``deletedAt`` is set is a tombstone (in the trash): agent listings and counts
  leave tombstones out unless ``AgentFilter.trashed`` asks for them; ``get`` returns them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from paseo_hookspecs.records import (
    AgentRecord,
    CleanupItem,
    ManagedProcessRecord,
    PluginSourceRecord,
    ProjectRecord,
    ScheduleRecord,
    TimelineEntry,
    WorkspaceLabelDefinition,
    WorkspaceRecord,
)
from paseo_hookspecs.usage import UsageRecord, UsageRepository

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 200
MAX_PAGE_SIZE = 1000


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing. ``next_cursor`` is ``None`` on the last page."""

    items: list[T]
    next_cursor: str | None = None
    partial: bool = False
    """The page was answered from an index the driver is still completing or checking in the
    background (:meth:`AgentRepository.list_now`): it may miss agents or hold ones that no
    longer match. Never set by :meth:`AgentRepository.list`, which waits instead."""


Changes = Mapping[str, Any]
"""Top-level field → new value (JSON-ready). ``None`` stores ``null`` for nullable fields and
removes optional ones."""

Expect = Mapping[str, Any]
"""Compare-and-set condition: top-level field → the value it must currently hold (``None``
matches absent or null). A mismatch raises ``Conflict`` and changes nothing."""


@dataclass(frozen=True)
class AgentFilter:
    """Which agents a listing returns. Every given criterion must hold."""

    include_archived: bool = False
    workspace_id: str | None = None
    provider: str | None = None
    statuses: frozenset[str] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    requires_attention: bool | None = None
    trashed: bool | None = False
    """``False``: live agents only (tombstones left out); ``True``: tombstones only (agents
    whose ``deletedAt`` is set); ``None``: both."""
    id_prefix: str | None = None
    """Agents whose id starts with this, ignoring case (naming an agent by an id prefix)."""
    title: str | None = None
    """Agents with exactly this title."""
    without_workspace: bool = False
    """Only agents with no ``workspaceId`` (records an older program wrote). A driver answers
    it from what it indexes, reading no record it does not return: start-up asks it on every
    boot."""


class AgentRepository(ABC):
    """Agent records, ordered by ``(createdAt, id)``."""

    @abstractmethod
    async def get(self, agent_id: str) -> AgentRecord | None:
        """The agent, or ``None``."""

    @abstractmethod
    async def list(
        self,
        filter: AgentFilter = AgentFilter(),
        *,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        newest_first: bool = False,
    ) -> Page[AgentRecord]:
        """A page of agents matching ``filter``; ``InvalidParams`` for a malformed cursor.
        With ``newest_first`` the order is reversed (the cursor then names the oldest row
        seen, and the next page holds the rows before it)."""

    @abstractmethod
    async def count(self, filter: AgentFilter = AgentFilter()) -> int:
        """How many agents match ``filter``."""

    async def list_now(
        self,
        filter: AgentFilter = AgentFilter(),
        *,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        newest_first: bool = False,
    ) -> Page[AgentRecord]:
        """:meth:`list`, answered at once: a driver still completing its index in the
        background (a JSON home right after start) answers from what it has and sets
        ``Page.partial`` rather than wait as :meth:`list` does. For callers that show the
        answer (``agent.list``) or ask again once :meth:`settled` returns. By default
        :meth:`list` (a driver whose listings are always complete)."""
        return await self.list(filter, cursor=cursor, limit=limit, newest_first=newest_first)

    async def count_now(self, filter: AgentFilter = AgentFilter()) -> int:
        """:meth:`count` from what the index holds now (see :meth:`list_now`); by default
        :meth:`count`."""
        return await self.count(filter)

    async def settled(self) -> None:  # noqa: B027 - optional; complete drivers return at once
        """Return once listings are complete (the index a driver builds in the background is
        checked against the records). ``get`` and writes never wait for it."""

    @abstractmethod
    async def insert(self, record: AgentRecord) -> bool:
        """Insert if no agent has this id; ``False`` (nothing written) when one does."""

    @abstractmethod
    async def update(
        self, agent_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> AgentRecord:
        """Apply ``changes`` if ``expect`` holds; return the stored record. ``NotFound``,
        ``Conflict`` (expectation failed) or ``InvalidParams`` (the result would be invalid);
        nothing is written on error."""

    @abstractmethod
    async def delete(self, agent_id: str) -> bool:
        """Remove the agent and its timeline; ``False`` when it did not exist."""


class TimelineRepository(ABC):
    """Per-agent timelines: entries with strictly increasing ``seq`` per agent."""

    @abstractmethod
    async def append(self, entries: Sequence[TimelineEntry]) -> None:
        """Append entries (all of one agent, ``seq`` strictly increasing and greater than every
        stored ``seq`` of that agent, else ``Conflict`` and nothing is written). In order, all
        or nothing; on return they are readable and survive the daemon process being killed.
        A store may force them to stable storage after returning (timelines are written at
        the pace of a model's output); :meth:`sync` waits for that."""

    @abstractmethod
    async def read(
        self,
        agent_id: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int | None = None,
        tail: bool = False,
    ) -> list[TimelineEntry]:
        """Entries in ascending ``seq`` strictly between the bounds. With ``tail`` and a
        ``limit`` the *last* ``limit`` entries in range are returned (still ascending)."""

    @abstractmethod
    async def last(self, agent_id: str) -> TimelineEntry | None:
        """The newest entry, or ``None`` for an empty timeline."""

    @abstractmethod
    async def delete(self, agent_id: str) -> None:
        """Remove the whole timeline of ``agent_id``."""

    async def sync(self) -> None:  # noqa: B027 - optional; stores whose appends sync need nothing
        """Return once every entry appended so far is on stable storage (survives a power
        cut). Stores that force each append before returning need not override this."""

    async def append_with_usage(
        self, entries: Sequence[TimelineEntry], usage: Sequence[UsageRecord]
    ) -> None:
        """Append ``entries`` as :meth:`append` does and add ``usage`` (the records of the
        turns these entries end) to the store's ``usage`` repository as one atomic write:
        after a crash at any point either the entries and their records are all visible, or
        none of them. A record whose id is stored already is skipped (idempotent, as
        :meth:`~paseo_hookspecs.usage.UsageRepository.add`). Optional (added in 2.0): a store
        without it raises ``NotImplementedError`` having written nothing, and the kernel then
        appends and adds the records one after the other."""
        raise NotImplementedError


class TrashRepository(ABC):
    """Permanent removal of tombstoned agents and the durable cleanup queue it feeds.

    A tombstone is an agent record with ``deletedAt`` set (written with
    :meth:`AgentRepository.update`; restoring clears it the same way). :meth:`purge` is the only
    way a tombstone leaves the store for good, and it enqueues its :class:`CleanupItem` in the
    same transaction, so after a crash either the agent is still a tombstone and nothing is
    queued, or it is gone and its item is queued. The queue is ordered by ``(createdAt, id)``.
    """

    @abstractmethod
    async def purge(self, agent_id: str, *, deleted_at: str, item: CleanupItem) -> bool:
        """In one transaction: remove the agent whose ``deletedAt`` is exactly ``deleted_at``,
        its timeline, and insert ``item``. ``False`` (nothing written) when there is no such
        tombstone (restored, purged already, or deleted at another instant);
        ``InvalidParams`` when ``item.agentId`` or ``item.deletedAt`` differ from the
        arguments; ``Conflict`` when an item with ``item.id`` is queued already."""

    @abstractmethod
    async def queued(self, *, limit: int = DEFAULT_PAGE_SIZE) -> list[CleanupItem]:
        """The oldest ``limit`` queued items (clamped to :data:`MAX_PAGE_SIZE`)."""

    @abstractmethod
    async def retire(self, item_id: str) -> bool:
        """Remove a finished item; ``False`` when it was not queued."""

    @abstractmethod
    async def retry_later(self, item_id: str, *, error: str, at: str) -> CleanupItem:
        """Record a failed attempt (``attempts`` + 1, ``lastError``, ``lastAttemptAt``); the
        item stays queued. ``NotFound`` when it is not queued."""

    @abstractmethod
    async def last_sweep(self) -> str | None:
        """When the last successful automatic sweep finished, or ``None``."""

    @abstractmethod
    async def record_sweep(self, at: str) -> None:
        """Remember ``at`` as the last successful automatic sweep."""


class ScheduleRepository(ABC):
    """Schedules, ordered by ``(createdAt, id)``."""

    @abstractmethod
    async def get(self, schedule_id: str) -> ScheduleRecord | None: ...

    @abstractmethod
    async def list(
        self,
        *,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[ScheduleRecord]:
        """A page of schedules, optionally of one ``status``."""

    @abstractmethod
    async def insert(self, record: ScheduleRecord) -> bool:
        """Insert if the id is free; ``False`` when taken."""

    @abstractmethod
    async def update(
        self, schedule_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> ScheduleRecord:
        """Compare-and-set update (see :meth:`AgentRepository.update`)."""

    @abstractmethod
    async def upsert_run(
        self, schedule_id: str, run: Mapping[str, Any], changes: Changes | None = None
    ) -> ScheduleRecord:
        """Add the run (or replace the run with the same ``id``) and apply ``changes`` to the
        schedule (e.g. ``lastRunAt``, ``nextRunAt``, ``status``) in one transaction."""

    @abstractmethod
    async def delete(self, schedule_id: str) -> bool: ...


class ProjectRepository(ABC):
    """The project registry, in insertion order."""

    @abstractmethod
    async def get(self, project_id: str) -> ProjectRecord | None: ...

    @abstractmethod
    async def list(
        self,
        *,
        include_archived: bool = False,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[ProjectRecord]: ...

    @abstractmethod
    async def insert_if_root_free(self, record: ProjectRecord) -> tuple[ProjectRecord, bool]:
        """Insert ``record`` unless an *active* project already has the same ``rootPath``;
        returns ``(stored, created)`` — the existing project and ``False`` in that case. This is
        what makes opening an exact root idempotent under concurrent opens."""

    @abstractmethod
    async def update(
        self, project_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> ProjectRecord: ...

    @abstractmethod
    async def delete(self, project_id: str) -> bool: ...


class WorkspaceRepository(ABC):
    """The workspace registry, in insertion order.

    While label storage is uncertain (see :class:`LabelRepository`) every write here raises
    ``WorkspaceLabelStorageUncertain``; reads keep working.
    """

    @abstractmethod
    async def get(self, workspace_id: str) -> WorkspaceRecord | None: ...

    @abstractmethod
    async def list(
        self,
        *,
        project_id: str | None = None,
        include_archived: bool = False,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Page[WorkspaceRecord]: ...

    @abstractmethod
    async def insert(self, record: WorkspaceRecord) -> bool:
        """Insert if the id is free; ``False`` when taken."""

    @abstractmethod
    async def update(
        self, workspace_id: str, changes: Changes, *, expect: Expect | None = None
    ) -> WorkspaceRecord: ...

    @abstractmethod
    async def delete(self, workspace_id: str) -> bool: ...


class LabelRepository(ABC):
    """The host-wide workspace-label catalog and its assignments.

    Names are unique by identity (trimmed, whitespace-collapsed, case-insensitive). Rename and
    delete rewrite every workspace assignment in one compound commit; recolour is catalog-only.
    If a compound commit can neither complete nor roll back, the store freezes every
    workspace-registry write and label mutation (``WorkspaceLabelStorageUncertain``) until it is
    reopened, whose recovery settles the durable state.
    """

    @abstractmethod
    async def list(self) -> list[WorkspaceLabelDefinition]:
        """The catalog, in display order."""

    @abstractmethod
    async def create(self, name: str, color: str) -> WorkspaceLabelDefinition:
        """Add a label; ``Conflict`` when the name's identity exists; ``InvalidParams`` for an
        empty name or an unknown colour."""

    @abstractmethod
    async def edit(
        self, name: str, *, new_name: str | None = None, color: str | None = None, now: str
    ) -> WorkspaceLabelDefinition:
        """Rename and/or recolour in one commit. A rename rewrites assignments (stamping each
        changed workspace's ``updatedAt`` with ``now``); a rename onto another existing name is
        refused with ``Conflict``. ``NotFound`` for an unknown label."""

    @abstractmethod
    async def delete(self, name: str, *, now: str) -> bool:
        """Remove the label and every assignment of it; ``False`` when unknown."""

    @abstractmethod
    async def assign(self, workspace_id: str, names: Sequence[str], *, now: str) -> WorkspaceRecord:
        """Add catalog labels to a workspace (idempotent); ``NotFound`` for an unknown workspace
        or label."""

    @abstractmethod
    async def unassign(
        self, workspace_id: str, names: Sequence[str], *, now: str
    ) -> WorkspaceRecord:
        """Remove labels from a workspace (idempotent)."""


class PushTokenRepository(ABC):
    """Expo push tokens (a set)."""

    @abstractmethod
    async def list(self) -> list[str]: ...

    @abstractmethod
    async def add(self, token: str) -> bool:
        """``False`` when already present."""

    @abstractmethod
    async def remove(self, token: str) -> bool:
        """``False`` when absent."""


class ManagedProcessRepository(ABC):
    """Helper processes owned by Paseo, reconciled at boot."""

    @abstractmethod
    async def get(self, record_id: str) -> ManagedProcessRecord | None: ...

    @abstractmethod
    async def list(self) -> list[ManagedProcessRecord]: ...

    @abstractmethod
    async def put(self, record: ManagedProcessRecord) -> None:
        """Insert or replace."""

    @abstractmethod
    async def delete(self, record_id: str) -> bool: ...


class PluginSourceRepository(ABC):
    """Managed plugin sources (``plugins/sources.json``): kind and acquisition remote."""

    @abstractmethod
    async def get(self, plugin_id: str) -> PluginSourceRecord | None: ...

    @abstractmethod
    async def list(self) -> dict[str, PluginSourceRecord]: ...

    @abstractmethod
    async def put(self, plugin_id: str, record: PluginSourceRecord) -> None:
        """Insert or replace."""

    @abstractmethod
    async def delete(self, plugin_id: str) -> bool: ...


@dataclass(frozen=True)
class QuarantinedFile:
    """A record file that could not be loaded and was moved aside."""

    original: str
    moved_to: str
    reason: str


class Repositories(ABC):
    """What an open store exposes (mixed into :class:`paseo_hookspecs.interfaces.Store`)."""

    agents: AgentRepository
    timeline: TimelineRepository
    schedules: ScheduleRepository
    projects: ProjectRepository
    workspaces: WorkspaceRepository
    labels: LabelRepository
    push_tokens: PushTokenRepository
    managed_processes: ManagedProcessRepository
    plugin_sources: PluginSourceRepository
    trash: TrashRepository
    usage: UsageRepository | None = None
    """Usage accounting (added in 2.0, optional): ``None`` on a store that keeps none, and
    then the daemon accounts nothing."""

    quarantined: list[QuarantinedFile]
    """Files moved aside by the last :meth:`Store.open` (corrupt or schema-invalid)."""
