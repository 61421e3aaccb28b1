"""Run bookkeeping: the run entries, the bounded history, the curated output, boot recovery.

Pure functions over records and plain data, so the rules read (and are tested) in one place.
"""

from __future__ import annotations

import os
import secrets
from datetime import datetime
from typing import Any

from paseo_hookspecs.records import ScheduleRecord, dump_record
from paseo_hookspecs.schedules import ScheduleRunEnded

from paseo.schedules import cadence
from paseo.schedules.clock import iso, parse_iso

HISTORY_LIMIT = 50
"""Runs kept per schedule (the oldest are dropped). ``PASEO_SCHEDULE_HISTORY`` overrides it
until the config file has a field for it."""

OUTPUT_LIMIT = 4000
"""Characters of the agent's final reply kept as a run's output."""

RUN_TIMEOUT = 3600.0
"""Seconds a run waits for its turn to end before it is failed
(``PASEO_SCHEDULE_RUN_TIMEOUT`` overrides it)."""

RESTARTED = "daemon restarted"
"""The error of a run the daemon was executing when it died."""
STOPPED = "daemon stopped"
"""The error of a run cut short by a daemon shutdown."""


def _env_number(name: str, default: float, minimum: float) -> float:
    raw = os.environ.get(name)
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value >= minimum else default


def history_limit(configured: int | None = None) -> int:
    """The history bound: the environment override, else ``configured``, else the default."""
    fallback = configured if configured is not None and configured >= 1 else HISTORY_LIMIT
    return int(_env_number("PASEO_SCHEDULE_HISTORY", fallback, 1))


def run_timeout() -> float:
    return _env_number("PASEO_SCHEDULE_RUN_TIMEOUT", RUN_TIMEOUT, 0.1)


def curate(reply: str | None) -> str | None:
    """The final reply, bounded to :data:`OUTPUT_LIMIT` characters (the start is kept)."""
    if not reply:
        return None
    text = reply.strip()
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[:OUTPUT_LIMIT] + f"\n… ({len(text) - OUTPUT_LIMIT} more characters)"


def run_count(record: ScheduleRecord) -> int:
    """Runs started so far: the kept ``runCount``, or the history of a record without one
    (written by the TypeScript daemon, whose history is unbounded)."""
    extra = record.model_extra or {}
    kept = extra.get("runCount")
    counted = kept if isinstance(kept, int) and not isinstance(kept, bool) else 0
    return max(counted, len(record.runs))


def new_run(record: ScheduleRecord, scheduled_for: datetime, started: datetime) -> dict[str, Any]:
    taken = {run.id for run in record.runs}
    run_id = secrets.token_hex(4)
    while run_id in taken:
        run_id = secrets.token_hex(4)
    return {
        "id": run_id,
        "scheduledFor": iso(scheduled_for),
        "startedAt": iso(started),
        "endedAt": None,
        "status": "running",
        "agentId": None,
        "output": None,
        "error": None,
    }


def history_with(record: ScheduleRecord, run: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    """The stored history plus ``run``, trimmed to the newest ``limit`` runs."""
    runs = [dump_record(existing) for existing in record.runs]
    runs.append(run)
    return runs[-limit:]


def expired(record: ScheduleRecord, now: datetime) -> bool:
    return record.expiresAt is not None and parse_iso(record.expiresAt) <= now


def is_last(record: ScheduleRecord, count: int, next_at: datetime | None) -> bool:
    """Whether the run numbered ``count`` is the schedule's last one."""
    if record.maxRuns is not None and count >= record.maxRuns:
        return True
    if next_at is None:
        return False
    return record.expiresAt is not None and next_at >= parse_iso(record.expiresAt)


def recovery_changes(record: ScheduleRecord, now: datetime) -> dict[str, Any]:
    """What boot must change: runs a dead daemon left ``running`` fail with
    :data:`RESTARTED`, and :func:`rearm_changes`."""
    changes: dict[str, Any] = {}
    if any(run.status == "running" for run in record.runs):
        ended = iso(now)
        changes["runs"] = [
            {**dump_record(run), "status": "failed", "endedAt": ended, "error": RESTARTED}
            if run.status == "running"
            else dump_record(run)
            for run in record.runs
        ]
    changes.update(rearm_changes(record, now))
    return changes


def rearm_changes(record: ScheduleRecord, now: datetime) -> dict[str, Any]:
    """An active schedule whose slot passed (or that has none) moves to its first slot after
    ``now`` — missed slots are skipped, not replayed; one past its end completes."""
    if record.status != "active":
        return {}
    count = run_count(record)
    if expired(record, now) or (record.maxRuns is not None and count >= record.maxRuns):
        return {"status": "completed", "nextRunAt": None}
    previous = parse_iso(record.nextRunAt) if record.nextRunAt else None
    if previous is not None and previous > now:
        return {}
    following = cadence.next_slot(record.cadence, after=now, previous=previous)
    if record.expiresAt is not None and following >= parse_iso(record.expiresAt):
        return {"status": "completed", "nextRunAt": None}
    return {"nextRunAt": iso(following)}


def ended(record: ScheduleRecord, run: dict[str, Any]) -> ScheduleRunEnded:
    """What the ``paseo_schedule_run_ended`` tap is told of ``run``, recorded as ended."""
    agent_id = run.get("agentId")
    error = run.get("error")
    return ScheduleRunEnded(
        schedule_id=record.id,
        schedule_name=record.name,
        run_id=str(run["id"]),
        status="succeeded" if run.get("status") == "succeeded" else "failed",
        error=str(error) if error is not None else None,
        agent_id=str(agent_id) if agent_id else None,
        ended_at=str(run["endedAt"]),
    )
