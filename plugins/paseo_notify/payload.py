"""What a notification says: the JSON every sink is given, and its one-line text form."""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.agents import Agents
from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.schedules import ScheduleRunEnded

SUMMARY_LIMIT = 280

REASON_TEXT = {
    "finished": "Finished",
    "permission": "Needs your permission",
    "error": "Failed",
    "budget": "Reached its budget",
    "schedule-failed": "A scheduled run failed",
}


def _short(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


async def summary_of(agents: Agents, record: AgentRecord, reason: str) -> str:
    """A short line about why: the reply, the permission asked for, or the error.

    Everything read here comes from the timeline and the record, which the daemon has already
    redacted (``daemon.redaction``).
    """
    if reason == "permission":
        pending = await agents.pending_permissions(record.id)
        if pending:
            request = pending[-1]
            return _short(f"{request.toolName or request.kind}: {request.title}")
    if reason == "error" and record.lastError:
        return _short(record.lastError)
    return _short(await agents.last_reply(record.id))


async def build(
    agents: Agents, agent_id: str, reason: str, timestamp: str, server_id: str
) -> tuple[AgentRecord, dict[str, Any]] | None:
    """The record and the notification for ``agent_id``; ``None`` when it is gone."""
    try:
        record = await agents.get(agent_id)
    except NotFound:
        return None
    title = record.title or f"Agent {agent_id[:8]}"
    payload: dict[str, Any] = {
        "event": reason,
        "agentId": agent_id,
        "title": title,
        "status": record.lastStatus,
        "reason": reason,
        "reasonText": REASON_TEXT.get(reason, reason),
        "workspace": {"id": record.workspaceId, "cwd": record.cwd},
        "provider": record.provider,
        "summary": await summary_of(agents, record, reason),
        "timestamp": timestamp,
        "serverId": server_id,
    }
    return record, payload


def schedule_failed(run: ScheduleRunEnded, server_id: str) -> dict[str, Any]:
    """The notification for a failed scheduled run: the same fields as an agent's, with the
    schedule's name as the title and the run's error as the summary (the run's record, which
    the daemon has redacted like every stored text)."""
    reason = "schedule-failed"
    return {
        "event": reason,
        "agentId": run.agent_id,
        "title": run.schedule_name or f"Schedule {run.schedule_id[:8]}",
        "status": run.status,
        "reason": reason,
        "reasonText": REASON_TEXT[reason],
        "workspace": None,
        "provider": None,
        "summary": _short(run.error),
        "timestamp": run.ended_at,
        "serverId": server_id,
        "scheduleId": run.schedule_id,
        "runId": run.run_id,
    }
