"""The wire models of the ``schedule.*`` RPC methods and the ``schedule.updated`` notification.

Schedules are named by *reference*: the 8-hex id, a unique prefix of it, or the exact name.
Records travel as stored (:class:`paseo_hookspecs.records.ScheduleRecord`); ``runCount`` is an
extra field the service keeps so ``maxRuns`` stays exact once old runs leave the history.

Stream ``schedules`` carries ``schedule.updated`` with the record after every change (runs
starting and ending included), and with ``schedule: null`` once it is deleted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from paseo_hookspecs.records import AgentBudget, ScheduleRecord, ScheduleRun
from pydantic import Discriminator, Field, Tag

from paseo.rpc.models import StreamEvent, WireModel

ScheduleRef = Field(min_length=1, max_length=200, description="id, unique id prefix or name")


class CronCadenceParams(WireModel):
    type: Literal["cron"]
    expression: str = Field(min_length=1, description="five fields: min hour dom month dow")
    timezone: str | None = Field(default=None, description="IANA zone; default UTC")


class EveryCadenceParams(WireModel):
    type: Literal["every"]
    everyMs: int = Field(description="interval in milliseconds (legacy cadence)")


class NewAgentConfigParams(WireModel):
    profile: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="an agent profile's id or name; its settings fill in the fields not given "
        "at each run",
    )
    provider: str | None = Field(
        default=None, description="default: the profile's, else the first ready provider"
    )
    cwd: str = Field(min_length=1, description="absolute directory")
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    title: str | None = Field(default=None, max_length=300)
    systemPrompt: str | None = None
    providerOptions: dict[str, Any] | None = None
    featureValues: dict[str, Any] | None = None
    mcpServers: dict[str, Any] | None = None
    labels: dict[str, str] | None = Field(
        default=None, description="labels each run's agent carries, beside the schedule's own"
    )
    budget: AgentBudget | None = Field(
        default=None, description="spending cap {tokens?, usd?} of each agent a run creates"
    )


class AgentTargetParams(WireModel):
    type: Literal["agent"]
    agentId: str = Field(
        min_length=1, max_length=300, description="full id, unique id prefix or title"
    )


class NewAgentTargetParams(WireModel):
    type: Literal["new-agent"]
    config: NewAgentConfigParams


class PluginTargetParams(WireModel):
    type: str = Field(
        pattern=r"^[a-z][a-z0-9-]{0,62}$",
        description="a target a plugin offers (the loops plugin's `loop`)",
    )
    config: dict[str, Any] = Field(description="what that target takes (docs/loops.md: `loop`)")


def _target_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("agent", "new-agent") else "plugin"


class ScheduleCreateParams(WireModel):
    prompt: str = Field(min_length=1)
    name: str | None = Field(default=None, max_length=200)
    cadence: Annotated[CronCadenceParams | EveryCadenceParams, Field(discriminator="type")]
    target: Annotated[
        Annotated[AgentTargetParams, Tag("agent")]
        | Annotated[NewAgentTargetParams, Tag("new-agent")]
        | Annotated[PluginTargetParams, Tag("plugin")],
        Discriminator(_target_kind),
    ]
    maxRuns: int | None = Field(default=None, description="complete after this many runs")
    expiresAt: str | None = Field(default=None, description="ISO 8601; complete at this time")


class ScheduleListParams(WireModel):
    status: Literal["active", "paused", "completed"] | None = None


class QuarantinedSchedule(WireModel):
    path: str
    movedTo: str
    reason: str


class ScheduleListResult(WireModel):
    schedules: list[ScheduleRecord]
    quarantined: list[QuarantinedSchedule] = Field(
        description="schedule files that failed validation at boot and were moved aside"
    )


class ScheduleRefParams(WireModel):
    scheduleId: str = ScheduleRef


class ScheduleResult(WireModel):
    schedule: ScheduleRecord


class ScheduleLogsParams(WireModel):
    scheduleId: str = ScheduleRef
    limit: int = Field(default=50, ge=1, le=1000, description="newest runs, oldest first")


class ScheduleLogsResult(WireModel):
    scheduleId: str
    runs: list[ScheduleRun]


class ScheduleDeleteResult(WireModel):
    scheduleId: str
    deleted: bool = True


class ScheduleRunNowResult(WireModel):
    schedule: ScheduleRecord
    runId: str


class ScheduleUpdatedEvent(StreamEvent):
    """``schedule.updated`` on the ``schedules`` stream."""

    scheduleId: str
    schedule: ScheduleRecord | None = Field(description="null: the schedule was deleted")


NOTIFICATIONS: dict[str, type[StreamEvent]] = {"schedule.updated": ScheduleUpdatedEvent}
"""Schedule notification method -> params model (for the protocol schema)."""
