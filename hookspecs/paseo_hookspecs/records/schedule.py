"""The schedule record: one JSON file per schedule under ``schedules/{scheduleId}.json``.

A schedule sends ``prompt`` on a cadence (a cron expression, or the legacy rolling interval) to an
existing agent or to an agent it creates, and keeps its run history. The TypeScript writer always
writes every nullable field (``name``, ``nextRunAt`` ... ``maxRuns``, and a run's ``endedAt``,
``agentId``, ``output``, ``error``), so those are always written here too; absent on read they are
``null``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, Tag

from paseo_hookspecs.records._base import RecordModel
from paseo_hookspecs.records.agent import AgentBudget
from paseo_hookspecs.records.ids import AGENT_ID_PATTERN

__all__ = [
    "AgentScheduleTarget",
    "CronCadence",
    "EveryCadence",
    "NewAgentConfig",
    "NewAgentScheduleTarget",
    "PluginScheduleTarget",
    "ScheduleCadence",
    "ScheduleRecord",
    "ScheduleRun",
    "ScheduleRunStatus",
    "ScheduleStatus",
    "ScheduleTarget",
]

ScheduleStatus = Literal["active", "paused", "completed"]
ScheduleRunStatus = Literal["running", "succeeded", "failed"]

_NonBlank = Annotated[str, Field(min_length=1, pattern=r"\S")]
_AgentId = Annotated[str, Field(pattern=AGENT_ID_PATTERN.pattern)]


class CronCadence(RecordModel):
    """The canonical cadence: a cron ``expression`` read in ``timezone`` (absent means UTC)."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"timezone"})

    type: Literal["cron"]
    expression: _NonBlank
    timezone: _NonBlank | None = None


class EveryCadence(RecordModel):
    """The legacy rolling interval of ``everyMs`` milliseconds; still readable and executable."""

    type: Literal["every"]
    everyMs: Annotated[int, Field(gt=0)]


ScheduleCadence = Annotated[CronCadence | EveryCadence, Field(discriminator="type")]
"""When a schedule fires, discriminated on ``type``."""


class NewAgentConfig(RecordModel):
    """How a ``new-agent`` target creates the agent each run."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset(
        {
            "modeId",
            "model",
            "thinkingOptionId",
            "archiveOnFinish",
            "isolation",
            "providerOptions",
            "featureValues",
            "systemPrompt",
            "mcpServers",
            "profile",
            "labels",
            "budget",
        }
    )

    provider: str
    cwd: _NonBlank
    modeId: _NonBlank | None = None
    model: _NonBlank | None = None
    thinkingOptionId: _NonBlank | None = None
    archiveOnFinish: bool | None = None
    isolation: Literal["local", "worktree"] | None = None
    title: _NonBlank | None = None
    providerOptions: dict[str, Any] | None = None
    featureValues: dict[str, Any] | None = None
    systemPrompt: str | None = None
    mcpServers: dict[str, Any] | None = None
    profile: _NonBlank | None = None
    """An agent profile (``daemon.agentProfiles``, by id or name) resolved at each run: its
    settings fill in what this config leaves unset (a Paseo for Python addition)."""
    labels: dict[str, str] | None = None
    """Labels every agent a run creates carries, beside the schedule's own (a Paseo for Python
    addition: an agent's schedule gives its runs' agents ``paseo.parent-agent-id``).

    .. versionadded:: 2.0
    """
    budget: AgentBudget | None = None
    """The spending cap of each agent a run creates (added in 2.0, a Paseo for Python
    addition): see :class:`paseo_hookspecs.records.agent.AgentBudget`."""


class AgentScheduleTarget(RecordModel):
    """Send the prompt to the existing agent ``agentId``."""

    type: Literal["agent"]
    agentId: _AgentId


class NewAgentScheduleTarget(RecordModel):
    """Create a new agent from ``config`` and send it the prompt."""

    type: Literal["new-agent"]
    config: NewAgentConfig


class PluginScheduleTarget(RecordModel):
    """Run a target a plugin offers (``paseo_register_schedule_targets``), e.g. the loops
    plugin's ``loop``: ``type`` names it, ``config`` is what that plugin validated at create
    time. A Paseo for Python addition (a TypeScript daemon does not run it).

    .. versionadded:: 2.0
    """

    type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,62}$")]
    """Never ``agent`` or ``new-agent`` (those discriminate to their own models)."""
    config: dict[str, Any]
    """Required: a target of an unknown ``type`` without one is not a plugin's (it is
    refused, as before plugins could offer targets)."""


def _target_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("agent", "new-agent") else "plugin"


ScheduleTarget = Annotated[
    Annotated[AgentScheduleTarget, Tag("agent")]
    | Annotated[NewAgentScheduleTarget, Tag("new-agent")]
    | Annotated[PluginScheduleTarget, Tag("plugin")],
    Discriminator(_target_kind),
]
"""What a schedule runs, discriminated on ``type`` (any type but ``agent`` and ``new-agent``
is a plugin's, since 2.0)."""


class ScheduleRun(RecordModel):
    """One execution of a schedule."""

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"endedAt", "agentId", "output", "error"})

    id: str
    scheduledFor: str
    startedAt: str
    endedAt: str | None = None
    status: ScheduleRunStatus
    agentId: _AgentId | None = None
    workspaceId: str | None = None
    output: str | None = None
    error: str | None = None


class ScheduleRecord(RecordModel):
    """One schedule, as stored in ``schedules/{scheduleId}.json``."""

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset(
        {"name", "nextRunAt", "lastRunAt", "pausedAt", "expiresAt", "maxRuns", "runs"}
    )

    id: str
    name: str | None = None
    prompt: Annotated[str, Field(min_length=1)]
    cadence: ScheduleCadence
    target: ScheduleTarget
    status: ScheduleStatus
    createdAt: str
    updatedAt: str
    nextRunAt: str | None = None
    lastRunAt: str | None = None
    pausedAt: str | None = None
    expiresAt: str | None = None
    maxRuns: Annotated[int, Field(gt=0)] | None = None
    runs: list[ScheduleRun] = Field(default_factory=list)
