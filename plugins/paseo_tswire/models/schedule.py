"""``schedule/*`` messages (``packages/server/src/server/schedule/rpc-schemas.ts``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from paseo_tswire.models.wire import Inbound, Wire


class EveryCadence(Wire):
    type: Literal["every"] = "every"
    everyMs: int = Field(gt=0)


class CronCadence(Wire):
    type: Literal["cron"] = "cron"
    expression: str = Field(min_length=1)


class AgentTarget(Wire):
    type: Literal["agent"] = "agent"
    agentId: str


class NewAgentConfig(Wire):
    provider: str
    cwd: str = Field(min_length=1)
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    title: str | None = None
    systemPrompt: str | None = None
    mcpServers: dict[str, Any] | None = None


class NewAgentTarget(Wire):
    type: Literal["new-agent"] = "new-agent"
    config: NewAgentConfig


class Run(Wire):
    id: str
    scheduledFor: str
    startedAt: str
    endedAt: str | None
    status: Literal["running", "succeeded", "failed"]
    agentId: str | None
    output: str | None
    error: str | None


class Summary(Wire):
    id: str
    name: str | None
    prompt: str = Field(min_length=1)
    cadence: EveryCadence | CronCadence
    target: AgentTarget | NewAgentTarget
    status: Literal["active", "paused", "completed"]
    createdAt: str
    updatedAt: str
    nextRunAt: str | None
    lastRunAt: str | None
    pausedAt: str | None
    expiresAt: str | None
    maxRuns: int | None


class Stored(Summary):
    runs: list[Run]


class ScheduleReply(Wire):
    """``create``, ``pause`` and ``resume`` answers."""

    requestId: str
    schedule: Summary | None
    error: str | None


class ListReply(Wire):
    requestId: str
    schedules: list[Summary]
    error: str | None


class InspectReply(Wire):
    requestId: str
    schedule: Stored | None
    error: str | None


class LogsReply(Wire):
    requestId: str
    runs: list[Run]
    error: str | None


class DeleteReply(Wire):
    requestId: str
    scheduleId: str
    error: str | None


class CreateTarget(Inbound):
    type: Literal["self", "agent", "new-agent"]
    agentId: str | None = None
    config: dict[str, Any] | None = None


class CreateRequest(Inbound):
    requestId: str
    prompt: str = Field(min_length=1)
    name: str | None = None
    cadence: dict[str, Any]
    target: CreateTarget
    maxRuns: int | None = Field(default=None, gt=0)
    expiresAt: str | None = None


class ListRequest(Inbound):
    requestId: str


class ScheduleRef(Inbound):
    requestId: str
    scheduleId: str


SCHEDULE_OUTBOUND: dict[str, type[Wire]] = {
    "schedule/create/response": ScheduleReply,
    "schedule/list/response": ListReply,
    "schedule/inspect/response": InspectReply,
    "schedule/logs/response": LogsReply,
    "schedule/pause/response": ScheduleReply,
    "schedule/resume/response": ScheduleReply,
    "schedule/delete/response": DeleteReply,
}
