"""The ``schedules`` kernel service: schedule records, the scheduler, and the runs.

The service owns every write to ``store.schedules``. It keeps only a small index in memory:
the next run time of each active schedule, in a heap. The scheduler task sleeps until the
earliest of them (or a change, which wakes it), so an idle daemon with thousands of schedules
wakes about once a minute (:data:`paseo.schedules.clock.MAX_SLEEP`, the bound on noticing a
wall-clock jump) and reads a schedule's file only when it is due.

Rules (see also :mod:`paseo.schedules.runs`): ``nextRunAt`` is written whenever it changes
(``null`` while paused or completed); a slot that comes while the previous run of the same
schedule still works is skipped, never run alongside it; so is a slot that comes while
:func:`max_concurrent_runs` runs of any schedules are in flight (each may have started an
agent); a run's agent, output and error land in the run entry; ``maxRuns`` and ``expiresAt``
complete the schedule with its last run. A schedule whose target agent is gone (deleted) is
paused with ``pausedReason`` saying so, and resumed when that agent is restored.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, PaseoError, Unavailable
from paseo_hookspecs.records import (
    SCHEDULES_DIR,
    AgentScheduleTarget,
    CronCadence,
    EveryCadence,
    NewAgentConfig,
    NewAgentScheduleTarget,
    PluginScheduleTarget,
    ScheduleRecord,
    ScheduleRun,
    dump_record,
    new_schedule_id,
)
from paseo_hookspecs.schedules import ScheduleRunEnded
from paseo_hookspecs.store import MAX_PAGE_SIZE, ScheduleRepository

from paseo.schedules import cadence, runs
from paseo.schedules.clock import Clock, SystemClock, iso, parse_iso
from paseo.schedules.models import PluginTargetParams, QuarantinedSchedule, ScheduleCreateParams
from paseo.schedules.ports import SCHEDULE_ID_LABEL, SCHEDULE_RUN_LABEL, ScheduleAgents
from paseo.schedules.targets import PluginTargets

if TYPE_CHECKING:
    from paseo_hookspecs.interfaces.store import Store

    from paseo.services import ConfigView, Publisher

log = logging.getLogger("paseo.schedules")

STREAM = "schedules"
STREAM_ACCESS = frozenset({"local", "remote"})
UPDATED = "schedule.updated"

BOOT_PAGE = 100
"""Records read at a time at boot (small pages keep the start-up peak low)."""

MAX_CONCURRENT_RUNS = 4
"""Runs of all schedules in flight at once, by default (``PASEO_SCHEDULE_MAX_CONCURRENT``
overrides it): each run may start an agent and its provider's processes."""

PAUSED_REASON = "pausedReason"
BUDGET_EXCEEDED = "budget_exceeded"
"""The error code of a prompt a spent budget refused (see :mod:`paseo.agents.budgets`)."""
"""The record field (an extra, like ``runCount``) saying why the daemon paused a schedule."""
TARGET_DELETED = "the target agent was deleted; restoring it (`paseo trash restore`) resumes this"


def _cleared_reason(record: ScheduleRecord) -> dict[str, Any]:
    """The change that drops a daemon-set pause reason, when the record has one (a record
    without one is not given a ``null`` field it never had)."""
    return {PAUSED_REASON: None} if PAUSED_REASON in (record.model_extra or {}) else {}


def max_concurrent_runs() -> int:
    raw = os.environ.get("PASEO_SCHEDULE_MAX_CONCURRENT", "")
    return int(raw) if raw.isdigit() and int(raw) >= 1 else MAX_CONCURRENT_RUNS


class ScheduleService:
    """See the module docstring."""

    name = "schedules"

    def __init__(
        self,
        *,
        store: Store,
        publisher: Publisher,
        agents: ScheduleAgents,
        clock: Clock | None = None,
        config: ConfigView,
        targets: PluginTargets | None = None,
        on_run_ended: Callable[[ScheduleRunEnded], None] | None = None,
    ) -> None:
        self._store = store
        self._on_run_ended = on_run_ended
        """Told of each run :meth:`_execute` ends (the ``paseo_schedule_run_ended`` tap)."""
        self._targets = targets or PluginTargets()
        """The schedule targets plugins offer (``loop``), beside ``agent`` and ``new-agent``."""
        self._publisher = publisher
        self._agents = agents
        self._clock = clock or SystemClock()
        self._config = config
        self._next: dict[str, float] = {}
        """Active schedule id -> its next run time (POSIX seconds): the live index."""
        self._heap: list[tuple[float, str]] = []
        """``(time, id)``; entries that no longer match :attr:`_next` are skipped."""
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        """Serialises read-decide-write of schedule records (runs work outside it)."""
        self._running: dict[str, tuple[asyncio.Task[None], dict[str, Any]]] = {}
        self._loop_task: asyncio.Task[None] | None = None
        self.quarantined: list[QuarantinedSchedule] = []

    @property
    def _repo(self) -> ScheduleRepository:
        return self._store.schedules

    # ================================================================ lifecycle

    async def start(self) -> None:
        """Recover what a previous daemon left, index the active schedules, start the loop."""
        self._publisher.register_stream(STREAM, STREAM_ACCESS)
        now = self._clock.now()
        # Page by page: the index keeps two numbers per schedule, never the records.
        cursor: str | None = None
        while True:
            page = await self._repo.list(cursor=cursor, limit=BOOT_PAGE)
            for stored in page.items:
                changes = runs.recovery_changes(stored, now)
                record = stored
                if changes:
                    record = await self._repo.update(stored.id, {**changes, "updatedAt": iso(now)})
                self._arm(record)
            cursor = page.next_cursor
            if cursor is None:
                break
        # After reading every schedule: a store that validates records in full only when it
        # reads them (the JSON driver) quarantines a damaged one during that pass.
        for item in self._store.quarantined:
            # Schedule files sit directly in schedules/ (agents are one folder deeper).
            if PurePath(item.original).parent.name == SCHEDULES_DIR.name:
                log.warning("schedule file %s was invalid: %s", item.original, item.reason)
                self.quarantined.append(
                    QuarantinedSchedule(
                        path=item.original, movedTo=item.moved_to, reason=item.reason
                    )
                )
        self._loop_task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """Stop the scheduler; runs in flight end ``failed`` ("daemon stopped")."""
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
        in_flight = list(self._running.items())
        for task, _run in self._running.values():
            task.cancel()
        for schedule_id, (task, run) in in_flight:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            ended = {**run, "status": "failed", "endedAt": iso(self._clock.now())}
            ended["error"] = runs.STOPPED
            with contextlib.suppress(NotFound):
                await self._repo.upsert_run(schedule_id, ended)
        self._running.clear()

    # ================================================================ index

    def _arm(self, record: ScheduleRecord) -> None:
        """Put ``record``'s next run in the index (or take it out) and wake the loop."""
        when = None
        if record.status == "active" and record.nextRunAt is not None:
            when = parse_iso(record.nextRunAt).timestamp()
        if when is None:
            self._next.pop(record.id, None)
        elif self._next.get(record.id) != when:
            self._next[record.id] = when
            heapq.heappush(self._heap, (when, record.id))
            if len(self._heap) > 2 * len(self._next) + 64:
                self._heap = [(at, sid) for sid, at in self._next.items()]
                heapq.heapify(self._heap)
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            now = self._clock.now()
            due = now.timestamp()
            while self._heap and self._heap[0][0] <= due:
                when, schedule_id = heapq.heappop(self._heap)
                if self._next.get(schedule_id) != when:
                    continue
                del self._next[schedule_id]
                try:
                    await self._due(schedule_id, now)
                except Exception:
                    log.exception("schedule %s: starting its run failed", schedule_id)
            deadline = None
            if self._heap:
                deadline = datetime.fromtimestamp(self._heap[0][0], UTC)
            await self._clock.sleep_until(deadline, self._wake)

    async def _due(self, schedule_id: str, now: datetime) -> None:
        async with self._lock:
            record = await self._repo.get(schedule_id)
            if record is None or record.status != "active" or record.nextRunAt is None:
                return
            scheduled = parse_iso(record.nextRunAt)
            following = cadence.next_slot(record.cadence, after=now, previous=scheduled)
            busy = None
            if schedule_id in self._running:
                busy = "previous run still working"
            elif len(self._running) >= max_concurrent_runs():
                busy = f"{len(self._running)} schedule runs already in flight (the cap)"
            if busy is not None:
                log.info("schedule %s: %s; slot skipped", schedule_id, busy)
                record = await self._write(
                    schedule_id, {"nextRunAt": iso(following), "updatedAt": iso(now)}
                )
                self._arm(record)
                return
            await self._begin(record, scheduled, now, following)

    async def _begin(
        self, record: ScheduleRecord, scheduled: datetime, now: datetime, following: datetime | None
    ) -> tuple[ScheduleRecord, str]:
        """Record a new ``running`` run and start executing it (under :attr:`_lock`)."""
        run = runs.new_run(record, scheduled, now)
        count = runs.run_count(record) + 1
        last = runs.is_last(record, count, following)
        changes: dict[str, Any] = {
            "runs": runs.history_with(record, run, self._history_limit()),
            "runCount": count,
            "lastRunAt": iso(now),
            "updatedAt": iso(now),
        }
        if last:
            changes["nextRunAt"] = None
        elif following is not None:
            changes["nextRunAt"] = iso(following)
        record = await self._write(record.id, changes)
        self._arm(record)
        task = asyncio.get_running_loop().create_task(self._execute(record, run, last))
        self._running[record.id] = (task, run)
        return record, str(run["id"])

    # ================================================================ runs

    async def _execute(self, record: ScheduleRecord, run: dict[str, Any], last: bool) -> None:
        schedule_id = record.id
        finished = dict(run)
        target_gone = False
        over_budget: str | None = None
        try:
            if isinstance(record.target, PluginScheduleTarget):
                fired = await self._targets.fire(
                    record, record.target, str(run["id"]), runs.run_timeout()
                )
                finished.update(
                    status=fired.status, output=runs.curate(fired.output), error=fired.error
                )
            else:
                try:
                    agent_id = await self._dispatch(record, run)
                except NotFound:
                    target_gone = isinstance(record.target, AgentScheduleTarget)
                    raise
                finished["agentId"] = agent_id
                entry = self._running.get(schedule_id)
                if entry is not None:
                    # A shutdown now records the run with its agent.
                    self._running[schedule_id] = (entry[0], dict(finished))
                with contextlib.suppress(NotFound):
                    self._publish_record(await self._repo.upsert_run(schedule_id, finished))
                outcome = await self._agents.wait_turn(agent_id, within=runs.run_timeout())
                finished.update(
                    status=outcome.status, output=runs.curate(outcome.reply), error=outcome.error
                )
        except PaseoError as exc:
            finished.update(status="failed", error=exc.message)
            if exc.code == BUDGET_EXCEEDED:
                over_budget = exc.message
        except Exception as exc:
            log.exception("schedule %s: run %s failed", schedule_id, run["id"])
            finished.update(status="failed", error=f"internal error: {exc}")
        finished["endedAt"] = iso(self._clock.now())
        async with self._lock:
            self._running.pop(schedule_id, None)
            changes: dict[str, Any] = {"updatedAt": finished["endedAt"]}
            if last:
                changes.update(status="completed", nextRunAt=None)
            elif target_gone:
                # Every later run would fail the same way: wait for the agent to come back.
                log.info("schedule %s: its target agent is gone; paused", schedule_id)
                changes.update(
                    status="paused",
                    nextRunAt=None,
                    pausedAt=finished["endedAt"],
                    **{PAUSED_REASON: TARGET_DELETED},
                )
            elif over_budget is not None:
                # Every run until the budget renews or is raised would be refused too.
                log.info("schedule %s: paused, over budget: %s", schedule_id, over_budget)
                changes.update(
                    status="paused",
                    nextRunAt=None,
                    pausedAt=finished["endedAt"],
                    **{PAUSED_REASON: f"budget: {over_budget}"},
                )
            try:
                updated = await self._repo.upsert_run(schedule_id, finished, changes)
            except NotFound:
                return
            self._arm(updated)
            self._publish_record(updated)
        if self._on_run_ended is not None:
            self._on_run_ended(runs.ended(updated, finished))

    async def _dispatch(self, record: ScheduleRecord, run: dict[str, Any]) -> str:
        """Hand the prompt to the target; returns the agent that works on it."""
        target = record.target
        assert not isinstance(target, PluginScheduleTarget)  # run by _execute
        if isinstance(target, AgentScheduleTarget):
            await self._agents.prompt(
                target.agentId, record.prompt, f"schedule-{record.id}-{run['id']}"
            )
            return target.agentId
        labels = {
            **(target.config.labels or {}),
            SCHEDULE_ID_LABEL: record.id,
            SCHEDULE_RUN_LABEL: str(run["id"]),
        }
        return await self._agents.create(target.config, record.prompt, labels)

    # ================================================================ operations

    async def create(self, params: ScheduleCreateParams) -> ScheduleRecord:
        """Validate and store a new schedule; its first run is the first slot after now."""
        now = self._clock.now()
        record_cadence = self._cadence(params)
        target = await self._target(params)
        if params.maxRuns is not None and params.maxRuns < 1:
            raise InvalidParams(f"maxRuns must be at least 1, got {params.maxRuns}")
        expires = None
        if params.expiresAt is not None:
            try:
                expires = parse_iso(params.expiresAt)
            except ValueError as exc:
                raise InvalidParams(f"expiresAt is not an ISO 8601 time: {exc}") from exc
            if expires <= now:
                raise InvalidParams(f"expiresAt {params.expiresAt} is not in the future")
        first = cadence.next_slot(record_cadence, after=now)
        if expires is not None and first >= expires:
            raise InvalidParams(
                f"the schedule would expire ({iso(expires)}) before its first run ({iso(first)})"
            )
        fields: dict[str, Any] = {
            "name": params.name,
            "prompt": params.prompt,
            "cadence": record_cadence,
            "target": target,
            "status": "active",
            "createdAt": iso(now),
            "updatedAt": iso(now),
            "nextRunAt": iso(first),
            "expiresAt": None if expires is None else iso(expires),
            "maxRuns": params.maxRuns,
            "runs": [],
        }
        while True:
            record = ScheduleRecord.model_validate({"id": new_schedule_id(), **fields})
            if await self._repo.insert(record):
                break
        self._arm(record)
        self._publish_record(record)
        return record

    def _cadence(self, params: ScheduleCreateParams) -> CronCadence | EveryCadence:
        given = params.cadence
        if given.type == "every":
            cadence.check_every(given.everyMs)
            return EveryCadence(type="every", everyMs=given.everyMs)
        cadence.check_cron(given.expression)
        if given.timezone is None:
            return CronCadence(type="cron", expression=given.expression)
        cadence.zone(given.timezone)
        return CronCadence(type="cron", expression=given.expression, timezone=given.timezone)

    async def _target(
        self, params: ScheduleCreateParams
    ) -> AgentScheduleTarget | NewAgentScheduleTarget | PluginScheduleTarget:
        given = params.target
        if isinstance(given, PluginTargetParams):
            return await self._targets.target(given.type, given.config)
        if given.type == "agent":
            state = await self._agents.lookup(given.agentId)
            if state is None:
                raise NotFound(
                    f"unknown target agent {given.agentId!r}: no agent has that id, id prefix "
                    "or title (see `paseo ls -a`)",
                    data={"agentId": given.agentId},
                )
            if state.archived:
                raise InvalidParams(f"target agent {state.id[:8]} is archived; restore it first")
            return AgentScheduleTarget(type="agent", agentId=state.id)
        config = given.config.model_dump(exclude_none=True)
        if not os.path.isabs(config["cwd"]):
            raise InvalidParams(f"cwd must be an absolute path, got {config['cwd']!r}")
        if config.get("profile"):
            # Checked now, so a typo fails the create rather than every run.
            profile_provider = self._agents.profile_provider(config["profile"])
            config.setdefault("provider", profile_provider)
        if not config.get("provider"):
            config["provider"] = self._agents.default_provider()
            if config["provider"] is None:
                raise Unavailable(
                    "no agent provider is ready; see `paseo provider ls`, or name one with "
                    "--provider"
                )
        return NewAgentScheduleTarget(
            type="new-agent", config=NewAgentConfig.model_validate(config)
        )

    async def list_schedules(self, status: str | None = None) -> list[ScheduleRecord]:
        return [r for r in await self._all() if status is None or r.status == status]

    async def get(self, reference: str) -> ScheduleRecord:
        """The schedule ``reference`` names: its id, a unique id prefix, or its exact name."""
        ref = reference.strip()
        exact = await self._repo.get(ref) if ref else None
        if exact is not None:
            return exact
        every = await self._all()
        for matches in (
            [r for r in every if ref and r.id.startswith(ref.lower())],
            [r for r in every if r.name is not None and r.name == ref],
        ):
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                shown = ", ".join(r.id for r in matches[:5])
                raise InvalidParams(f"{ref!r} names {len(matches)} schedules: {shown}")
        raise NotFound(
            f"no schedule is named {ref!r} (by id, id prefix or name); see `paseo schedule ls`",
            data={"scheduleId": ref},
        )

    async def logs(self, reference: str, limit: int) -> tuple[str, list[ScheduleRun]]:
        record = await self.get(reference)
        return record.id, list(record.runs[-limit:])

    async def pause(self, reference: str) -> ScheduleRecord:
        async with self._lock:
            record = await self.get(reference)
            if record.status == "completed":
                raise Conflict(f"schedule {record.id} is completed; it cannot be paused")
            if record.status == "paused":
                return record
            now = iso(self._clock.now())
            record = await self._write(
                record.id,
                {
                    "status": "paused",
                    "pausedAt": now,
                    "nextRunAt": None,
                    "updatedAt": now,
                    **_cleared_reason(record),
                },
            )
            self._arm(record)
            return record

    async def resume(self, reference: str) -> ScheduleRecord:
        async with self._lock:
            record = await self.get(reference)
            if record.status == "completed":
                raise Conflict(f"schedule {record.id} is completed; create a new one")
            if record.status == "active":
                return record
            return await self._resume(record)

    async def _resume(self, record: ScheduleRecord) -> ScheduleRecord:
        """``record`` (paused) active again from its first slot after now (under the lock)."""
        now = self._clock.now()
        changes: dict[str, Any] = {"status": "active", "pausedAt": None, **_cleared_reason(record)}
        probe = record.model_copy(update={"status": "active", "nextRunAt": None})
        changes.update(runs.rearm_changes(probe, now))
        changes["updatedAt"] = iso(now)
        record = await self._write(record.id, changes)
        self._arm(record)
        return record

    async def agent_restored(self, agent_id: str) -> list[str]:
        """Resume the schedules paused because their target agent ``agent_id`` was deleted
        (it is back from the trash); returns their ids."""
        resumed: list[str] = []
        async with self._lock:
            for record in await self._all():
                if (
                    record.status == "paused"
                    and (record.model_extra or {}).get(PAUSED_REASON) == TARGET_DELETED
                    and isinstance(record.target, AgentScheduleTarget)
                    and record.target.agentId == agent_id
                ):
                    await self._resume(record)
                    resumed.append(record.id)
        for schedule_id in resumed:
            log.info(
                "schedule %s: its target agent %s was restored; resumed", schedule_id, agent_id
            )
        return resumed

    async def delete(self, reference: str) -> str:
        async with self._lock:
            record = await self.get(reference)
            running = self._running.pop(record.id, None)
            if running is not None:
                running[0].cancel()
            await self._repo.delete(record.id)
            self._next.pop(record.id, None)
        self._publisher.publish(STREAM, UPDATED, {"scheduleId": record.id, "schedule": None})
        return record.id

    async def run_now(self, reference: str) -> tuple[ScheduleRecord, str]:
        """Start a run at once (the regular slots are unchanged); refused while one runs."""
        async with self._lock:
            record = await self.get(reference)
            if record.status == "completed":
                raise Conflict(f"schedule {record.id} is completed")
            if record.id in self._running:
                raise Conflict(f"schedule {record.id} has a run in progress")
            if len(self._running) >= max_concurrent_runs():
                raise Conflict(
                    f"{len(self._running)} schedule runs are in progress, the most allowed at "
                    "once (PASEO_SCHEDULE_MAX_CONCURRENT); try again when one has ended"
                )
            now = self._clock.now()
            following = parse_iso(record.nextRunAt) if record.nextRunAt else None
            return await self._begin(record, now, now, following)

    # ================================================================ helpers

    async def _all(self) -> list[ScheduleRecord]:
        rows: list[ScheduleRecord] = []
        cursor: str | None = None
        while True:
            page = await self._repo.list(cursor=cursor, limit=MAX_PAGE_SIZE)
            rows.extend(page.items)
            if page.next_cursor is None:
                return rows
            cursor = page.next_cursor

    async def _write(self, schedule_id: str, changes: Mapping[str, Any]) -> ScheduleRecord:
        record = await self._repo.update(schedule_id, changes)
        self._publish_record(record)
        return record

    def _publish_record(self, record: ScheduleRecord) -> None:
        self._publisher.publish(
            STREAM, UPDATED, {"scheduleId": record.id, "schedule": dump_record(record)}
        )

    def _history_limit(self) -> int:
        section = getattr(self._config.resolved, "schedules", None)
        configured = getattr(section, "historyLimit", None)
        return runs.history_limit(configured if isinstance(configured, int) else None)
