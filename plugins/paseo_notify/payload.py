"""What a notification says: the JSON every sink is given, and its one-line text form."""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.agents import Agents
from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.records import AgentRecord

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
