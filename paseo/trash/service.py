"""The trash service: deleted agents as recoverable tombstones, and their permanent removal.

``agent.delete`` leaves a tombstone: the agent's record with ``deletedAt`` set, its timeline and
its persistence handle, all still in the store but out of every listing. This service lists
tombstones, restores one (the record gets its ``deletedAt`` removed and is an agent again,
resumable through its persistence handle), and purges them for good.

Permanent removal (``purge``): one store transaction removes the tombstone and its timeline and
queues a :class:`~paseo_hookspecs.records.CleanupItem` naming the agent's Paseo-owned run
directory; the cleanup worker then removes that directory and (through the agent service) the
agent's environment file, and retires the item, or records the failure and leaves it queued for
the next pass. Nothing else is ever removed: not the agent's cwd, not a worktree (see
:mod:`paseo.trash.cleanup`).

Automatic maintenance runs only while no agent is working (checked before each batch of
:data:`BATCH_SIZE`): it drains the cleanup queue, then — at most once per :data:`SWEEP_EVERY`,
counted from the last sweep that finished (``trash.last_sweep`` in the store) — purges the
tombstones older than ``agents.trashRetentionDays``. A sweep cut short by work is not a
successful sweep: the next check resumes it. ``trash.empty`` purges on request, now.

The clock is a port (``clock``), so tests move time instead of waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentRecord, CleanupItem
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter

from paseo.agents.resolve import resolve_agent
from paseo.services import ConfigView
from paseo.trash.cleanup import CleanupRefused, remove_roots, roots_of

log = logging.getLogger("paseo.trash")

BATCH_SIZE = 20
"""Tombstones purged (or cleanup items drained) per batch; work is re-checked between them."""

SWEEP_EVERY = timedelta(hours=24)
"""At most one successful automatic sweep per this period."""

CHECK_INTERVAL = 600.0
"""Seconds between automatic maintenance checks."""

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class TrashAgents(Protocol):
    """What the trash needs of the agent service."""

    def readmit(self, record: AgentRecord) -> None:
        """Take a restored record back in as a (closed) agent."""

    def working(self) -> bool:
        """Whether any agent is at work now."""

    async def purged(self, agent_id: str) -> None:
        """Remove what the agent service keeps of a purged agent outside the store (its
        environment file); idempotent, since a crash before the item is retired repeats it."""


@dataclass(frozen=True)
class TrashEntry:
    record: AgentRecord
    deleted_at: datetime
    purge_after: datetime


@dataclass
class Report:
    """What one pass did."""

    purged: list[str] = field(default_factory=list)
    cleaned: int = 0
    failed: int = 0
    complete: bool = True
    """Every batch it set out to do ran (``False``: work started and it stopped early)."""


class TrashService:
    """See the module docstring."""

    name = "trash"

    def __init__(
        self,
        *,
        store: Store,
        config: ConfigView,
        agents: TrashAgents,
        home: Path,
        clock: Clock = utc_now,
        batch_size: int = BATCH_SIZE,
        purge_listeners: Sequence[Callable[[str], Awaitable[None]]] = (),
        restore_listeners: Sequence[Callable[[AgentRecord], Awaitable[object]]] = (),
    ) -> None:
        self.store = store
        self._config = config
        self._agents = agents
        self._home = home
        self._clock = clock
        self._batch = batch_size
        self._purge_listeners = tuple(purge_listeners)
        """Told each purged agent's id once its cleanup is done (e.g. the checkpoints drop
        its refs); they must not raise."""
        self._lock = asyncio.Lock()
        """One purge or cleanup pass at a time (the loop's and a client's)."""
        self._task: asyncio.Task[None] | None = None
        self._restore_listeners = tuple(restore_listeners)
        """Called with each restored record, after it is an agent again (what else comes back
        with it: its archived workspace and project, the schedules paused for its deletion)."""

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        while True:
            try:
                await self.maintain()
            except Exception:
                log.exception("trash maintenance failed; retrying at the next check")
            await asyncio.sleep(CHECK_INTERVAL)

    # ------------------------------------------------------------------ reads

    @property
    def retention(self) -> timedelta:
        return timedelta(days=self._config.resolved.agents.trashRetentionDays)

    async def entries(self) -> list[TrashEntry]:
        """Every tombstone, most recently deleted first."""
        records: list[AgentRecord] = []
        cursor: str | None = None
        flt = AgentFilter(include_archived=True, trashed=True)
        while True:
            page = await self.store.agents.list(flt, cursor=cursor, limit=MAX_PAGE_SIZE)
            records.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        retention = self.retention
        found = []
        for record in records:
            if record.deletedAt is not None:  # always, by the filter: this narrows the type
                deleted = parse_iso(record.deletedAt)
                found.append(TrashEntry(record, deleted, deleted + retention))
        return sorted(found, key=lambda e: (e.deleted_at, e.record.id), reverse=True)

    async def queued(self) -> list[CleanupItem]:
        return await self.store.trash.queued(limit=MAX_PAGE_SIZE)

    async def last_sweep(self) -> str | None:
        return await self.store.trash.last_sweep()

    async def _find(self, reference: str) -> AgentRecord:
        tombstones = [entry.record for entry in await self.entries()]
        try:
            return resolve_agent(reference, tombstones)
        except NotFound:
            raise NotFound(
                f"the trash holds no agent named {reference!r} (by id, id prefix or title); "
                "list it with `paseo trash ls`",
                data={"agentId": reference},
            ) from None

    # ------------------------------------------------------------------ restore

    async def restore(self, reference: str) -> AgentRecord:
        """Bring a tombstone back as it was deleted (its record is not otherwise rewritten)."""
        async with self._lock:
            record = await self._find(reference)
            try:
                restored = await self.store.agents.update(
                    record.id, {"deletedAt": None}, expect={"deletedAt": record.deletedAt}
                )
            except (Conflict, NotFound):
                raise Conflict(
                    f"agent {record.id} left the trash meanwhile; see `paseo trash ls`",
                    data={"agentId": record.id},
                ) from None
        self._agents.readmit(restored)
        for listener in self._restore_listeners:
            try:
                await listener(restored)
            except Exception:  # the agent is back either way; say what did not follow it
                log.exception("agent %s restored, but a restore listener failed", restored.id)
        return restored

    # ------------------------------------------------------------------ removal

    async def empty(self, references: Sequence[str] | None = None) -> Report:
        """Purge the named tombstones (every one when ``None``) now, then drain the queue."""
        async with self._lock:
            if references is None:
                chosen = [entry.record for entry in await self.entries()]
            else:
                chosen = [await self._find(reference) for reference in references]
            report = Report()
            for start in range(0, len(chosen), self._batch):
                await self._purge_batch(chosen[start : start + self._batch], report)
            await self._drain(report, set(), respect_work=False)
            return report

    async def maintain(self) -> Report | None:
        """One automatic pass (see the module docstring); ``None`` when agents are working."""
        if self._agents.working():
            return None
        async with self._lock:
            report = Report()
            attempted: set[str] = set()
            await self._drain(report, attempted, respect_work=True)
            now = self._clock()
            last = await self.store.trash.last_sweep()
            if not report.complete or (
                last is not None and now - parse_iso(last) < SWEEP_EVERY
            ):
                return report
            expired = [e.record for e in await self.entries() if e.purge_after <= now]
            expired.reverse()  # the longest-deleted first
            for start in range(0, len(expired), self._batch):
                if self._agents.working():
                    report.complete = False
                    return report
                await self._purge_batch(expired[start : start + self._batch], report)
            await self._drain(report, attempted, respect_work=True)
            if report.complete:
                await self.store.trash.record_sweep(iso(now))
            return report

    async def _purge_batch(self, records: Sequence[AgentRecord], report: Report) -> None:
        now = iso(self._clock())
        for record in records:
            deleted_at = record.deletedAt
            if deleted_at is None:
                continue
            item = CleanupItem(
                id=f"cln_{uuid.uuid4().hex}",
                agentId=record.id,
                deletedAt=deleted_at,
                createdAt=now,
                roots=roots_of(record.id),
            )
            if await self.store.trash.purge(record.id, deleted_at=deleted_at, item=item):
                report.purged.append(record.id)

    async def _drain(self, report: Report, attempted: set[str], *, respect_work: bool) -> None:
        """Work through the cleanup queue, a batch at a time, trying each item once per pass
        (``attempted``); failures stay queued for the next pass."""
        while True:
            if respect_work and self._agents.working():
                report.complete = False
                return
            batch = [
                item
                for item in await self.store.trash.queued(limit=len(attempted) + self._batch)
                if item.id not in attempted
            ]
            if not batch:
                return
            for item in batch:
                attempted.add(item.id)
                await self._clean(item, report)

    async def _clean(self, item: CleanupItem, report: Report) -> None:
        if await self.store.agents.get(item.agentId) is not None:
            # The id is an agent's again (live or in the trash): its files are not garbage.
            await self.store.trash.retire(item.id)
            return
        try:
            await asyncio.to_thread(remove_roots, self._home, item)
            await self._agents.purged(item.agentId)
            for listener in self._purge_listeners:
                await listener(item.agentId)
        except (OSError, CleanupRefused) as exc:
            report.failed += 1
            log.warning("cleanup of agent %s failed (kept queued): %s", item.agentId, exc)
            await self.store.trash.retry_later(item.id, error=str(exc), at=iso(self._clock()))
            return
        await self.store.trash.retire(item.id)
        report.cleaned += 1
