"""``schedule/<verb>`` → ``schedule.<verb>`` (this daemon's schedule service), answered
``schedule/<verb>/response`` with the error as text when the service refuses.

A schedule whose target a plugin offers (the loops plugin's ``loop``) has no TypeScript
shape: ``schedule/list`` leaves it out, and a verb naming it answers with an error saying so
(after the verb was carried out)."""

from __future__ import annotations

from typing import Any

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import schedule as sc

_CONFIG_KEYS = (
    "provider",
    "cwd",
    "modeId",
    "model",
    "thinkingOptionId",
    "title",
    "systemPrompt",
    "mcpServers",
)


def _cadence(raw: dict[str, Any]) -> sc.EveryCadence | sc.CronCadence:
    if raw.get("type") == "every":
        return sc.EveryCadence(everyMs=int(raw["everyMs"]))
    return sc.CronCadence(expression=str(raw.get("expression") or ""))


TS_TARGETS = ("agent", "new-agent")


def _foreign(raw: dict[str, Any]) -> str | None:
    """Why a TypeScript client cannot be shown this schedule (``None``: it can)."""
    kind = (raw.get("target") or {}).get("type")
    if kind in TS_TARGETS:
        return None
    return (
        f"schedule {raw.get('id')} runs a {kind!r} target, which TypeScript clients cannot "
        f"show; see `paseo schedule inspect {raw.get('id')}`"
    )


def _target(raw: dict[str, Any]) -> sc.AgentTarget | sc.NewAgentTarget:
    if raw.get("type") == "agent":
        return sc.AgentTarget(agentId=str(raw["agentId"]))
    config = raw.get("config") or {}
    return sc.NewAgentTarget(
        config=sc.NewAgentConfig(
            **{k: config[k] for k in _CONFIG_KEYS if config.get(k) is not None}
        )
    )


def _run(raw: dict[str, Any]) -> sc.Run:
    return sc.Run(
        id=str(raw["id"]),
        scheduledFor=str(raw["scheduledFor"]),
        startedAt=str(raw["startedAt"]),
        endedAt=raw.get("endedAt"),
        status=raw["status"],
        agentId=raw.get("agentId"),
        output=raw.get("output"),
        error=raw.get("error"),
    )


def summary(raw: dict[str, Any]) -> sc.Summary:
    return sc.Summary(
        id=str(raw["id"]),
        name=raw.get("name"),
        prompt=str(raw["prompt"]),
        cadence=_cadence(raw["cadence"]),
        target=_target(raw["target"]),
        status=raw["status"],
        createdAt=str(raw["createdAt"]),
        updatedAt=str(raw["updatedAt"]),
        nextRunAt=raw.get("nextRunAt"),
        lastRunAt=raw.get("lastRunAt"),
        pausedAt=raw.get("pausedAt"),
        expiresAt=raw.get("expiresAt"),
        maxRuns=raw.get("maxRuns"),
    )


def stored(raw: dict[str, Any]) -> sc.Stored:
    return sc.Stored(**summary(raw).model_dump(), runs=[_run(r) for r in raw.get("runs") or []])


async def create(session: ClientSession, msg: sc.CreateRequest) -> None:
    target: dict[str, Any]
    if msg.target.type == "new-agent":
        config = msg.target.config or {}
        target = {
            "type": "new-agent",
            "config": {k: config[k] for k in _CONFIG_KEYS if config.get(k) is not None},
        }
    else:
        target = {"type": "agent", "agentId": msg.target.agentId}
    params: dict[str, Any] = {"prompt": msg.prompt, "cadence": msg.cadence, "target": target}
    for key in ("name", "maxRuns", "expiresAt"):
        value = getattr(msg, key)
        if value is not None:
            params[key] = value
    try:
        found = await session.call("schedule.create", params)
    except RpcFailure as exc:
        reply = sc.ScheduleReply(requestId=msg.requestId, schedule=None, error=exc.message)
    else:
        reply = sc.ScheduleReply(
            requestId=msg.requestId, schedule=summary(found["schedule"]), error=None
        )
    await session.push("schedule/create/response", reply)


async def list_schedules(session: ClientSession, msg: sc.ListRequest) -> None:
    try:
        found = await session.call("schedule.list", {})
    except RpcFailure as exc:
        reply = sc.ListReply(requestId=msg.requestId, schedules=[], error=exc.message)
    else:
        reply = sc.ListReply(
            requestId=msg.requestId,
            schedules=[summary(s) for s in found.get("schedules") or [] if not _foreign(s)],
            error=None,
        )
    await session.push("schedule/list/response", reply)


async def inspect(session: ClientSession, msg: sc.ScheduleRef) -> None:
    try:
        found = await session.call("schedule.inspect", {"scheduleId": msg.scheduleId})
    except RpcFailure as exc:
        reply = sc.InspectReply(requestId=msg.requestId, schedule=None, error=exc.message)
    else:
        foreign = _foreign(found["schedule"])
        reply = sc.InspectReply(
            requestId=msg.requestId,
            schedule=None if foreign else stored(found["schedule"]),
            error=foreign,
        )
    await session.push("schedule/inspect/response", reply)


async def logs(session: ClientSession, msg: sc.ScheduleRef) -> None:
    try:
        found = await session.call("schedule.logs", {"scheduleId": msg.scheduleId})
    except RpcFailure as exc:
        reply = sc.LogsReply(requestId=msg.requestId, runs=[], error=exc.message)
    else:
        reply = sc.LogsReply(
            requestId=msg.requestId, runs=[_run(r) for r in found.get("runs") or []], error=None
        )
    await session.push("schedule/logs/response", reply)


async def _change(session: ClientSession, msg: sc.ScheduleRef, verb: str) -> None:
    try:
        found = await session.call(f"schedule.{verb}", {"scheduleId": msg.scheduleId})
    except RpcFailure as exc:
        reply = sc.ScheduleReply(requestId=msg.requestId, schedule=None, error=exc.message)
    else:
        foreign = _foreign(found["schedule"])
        reply = sc.ScheduleReply(
            requestId=msg.requestId,
            schedule=None if foreign else summary(found["schedule"]),
            error=foreign,
        )
    await session.push(f"schedule/{verb}/response", reply)


async def pause(session: ClientSession, msg: sc.ScheduleRef) -> None:
    await _change(session, msg, "pause")


async def resume(session: ClientSession, msg: sc.ScheduleRef) -> None:
    await _change(session, msg, "resume")


async def delete(session: ClientSession, msg: sc.ScheduleRef) -> None:
    try:
        await session.call("schedule.delete", {"scheduleId": msg.scheduleId})
    except RpcFailure as exc:
        reply = sc.DeleteReply(
            requestId=msg.requestId, scheduleId=msg.scheduleId, error=exc.message
        )
    else:
        reply = sc.DeleteReply(requestId=msg.requestId, scheduleId=msg.scheduleId, error=None)
    await session.push("schedule/delete/response", reply)
