"""The wire models of the ``agent.*`` and ``provider.*`` RPC methods and their notifications.

Every method that names an agent takes ``agentId`` as a *reference*: the full id, a unique
prefix of it, or the agent's exact title (see :func:`paseo.agents.resolve.resolve_agent`).

Streams: ``agents`` carries ``agent.created`` / ``agent.updated`` / ``agent.deleted`` with the
agent record; ``agent:<agentId>`` carries ``agent.event`` with one numbered timeline entry. Each
stream has its own notification ``seq`` (gap detection); the entry's own ``{epoch, seq}`` is the
durable timeline cursor to re-fetch from with ``agent.timeline``.
"""

from __future__ import annotations

from typing import Any, Literal

from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.interfaces.agent import PromptImage
from paseo_hookspecs.records import AgentBudget, AgentFeature, AgentRecord, TimelineEntry
from pydantic import Field

from paseo.rpc.models import StreamEvent, WireModel

MAX_IMAGES = 10
"""Images one prompt may carry."""

AgentRef = Field(min_length=1, max_length=300, description="full id, unique id prefix or title")


class AgentRefParams(WireModel):
    agentId: str = AgentRef


class AgentCreateParams(WireModel):
    profile: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="an agent profile's id or name (daemon.agentProfiles): its settings are "
        "the defaults of the fields not given",
    )
    provider: str | None = Field(
        default=None,
        max_length=100,
        description="provider id, or `provider/model`; default: the first ready provider",
    )
    cwd: str | None = Field(default=None, description="absolute directory the agent works in")
    workspaceId: str | None = Field(default=None, description="alternative to cwd")
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] = Field(default_factory=dict)
    title: str | None = Field(default=None, max_length=300)
    labels: dict[str, str] = Field(default_factory=dict)
    systemPrompt: str | None = None
    mcpServers: dict[str, Any] = Field(default_factory=dict)
    providerOptions: dict[str, Any] = Field(
        default_factory=dict, description="provider-specific options (SessionConfig.extra)"
    )
    initialPrompt: str | None = None
    images: list[PromptImage] = Field(
        default_factory=list, max_length=MAX_IMAGES, description="images with initialPrompt"
    )
    messageId: str | None = Field(default=None, max_length=200)
    internal: bool = Field(default=False, description="internal agents never ask for attention")
    budget: AgentBudget | None = Field(
        default=None,
        description="spending cap: {tokens?, usd?}; once reached its prompts are refused "
        "(`budget_exceeded`)",
    )


class AgentImportParams(WireModel):
    provider: str = Field(min_length=1, max_length=100, description="provider id")
    sessionId: str = Field(
        min_length=1,
        max_length=300,
        description="the provider's conversation id (Claude session, Codex thread, ACP session)",
    )
    cwd: str = Field(description="absolute directory the conversation ran in")
    title: str | None = Field(default=None, max_length=300)
    labels: dict[str, str] = Field(default_factory=dict)


class AgentResult(WireModel):
    agent: AgentRecord


class AgentDetailResult(WireModel):
    agent: AgentRecord
    pendingPermissions: list[PermissionRequest]
    timeline: TimelineCursor | None = Field(description="the newest entry's position")
    live: bool = Field(description="a provider process is running for this agent")


class AgentListParams(WireModel):
    includeArchived: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    provider: str | None = None
    workspaceId: str | None = None
    statuses: list[Literal["initializing", "idle", "running", "error", "closed"]] | None = None
    limit: int | None = Field(
        default=None, ge=1, le=1000, description="at most this many agents (default: all)"
    )
    cursor: str | None = Field(
        default=None, max_length=1000, description="the previous page's `nextCursor`"
    )
    newestFirst: bool = Field(default=False, description="newest agents first")


class AgentListResult(WireModel):
    agents: list[AgentRecord]
    nextCursor: str | None = Field(
        default=None, description="pass as `cursor` for the next page; null on the last"
    )
    total: int | None = Field(
        default=None, description="how many agents match (on the first page only)"
    )
    partial: bool | None = Field(
        default=None,
        description="true when the daemon, just started, is still checking its agent index "
        "against the records: agents may be missing from this page and the total; ask again "
        "shortly (absent otherwise)",
    )


class AgentSendParams(WireModel):
    agentId: str = AgentRef
    text: str = Field(min_length=1)
    images: list[PromptImage] = Field(
        default_factory=list,
        max_length=MAX_IMAGES,
        description="images the model sees with the text (providers whose program takes them)",
    )
    messageId: str | None = Field(
        default=None, max_length=200, description="client-chosen id; a repeat is ignored"
    )


class AgentSendResult(WireModel):
    agentId: str
    messageId: str
    accepted: bool = Field(description="false when messageId was already sent")


WaitOutcome = Literal["idle", "permission", "error", "timeout", "closed"]


class AgentWaitParams(WireModel):
    agentId: str = AgentRef
    timeout: float = Field(default=30.0, ge=0, le=600, description="seconds")


class AgentWaitResult(WireModel):
    agentId: str
    outcome: WaitOutcome
    status: str
    lastMessage: str | None = Field(description="the text of the agent's last reply")
    error: str | None
    pendingPermissions: list[PermissionRequest]


class AgentUpdateParams(WireModel):
    agentId: str = AgentRef
    title: str | None = Field(default=None, max_length=300)
    labels: dict[str, str | None] = Field(
        default_factory=dict, description="merged; a null value removes the label"
    )


class AgentModeParams(WireModel):
    agentId: str = AgentRef
    modeId: str = Field(min_length=1)


class AgentModelParams(WireModel):
    agentId: str = AgentRef
    model: str = Field(min_length=1)


class AgentThinkingParams(WireModel):
    agentId: str = AgentRef
    thinkingOptionId: str = Field(min_length=1)


class AgentFeatureParams(WireModel):
    agentId: str = AgentRef
    featureId: str = Field(min_length=1)
    value: Any = None


class ModeView(WireModel):
    id: str
    label: str
    description: str | None = None


class AgentModesResult(WireModel):
    agentId: str
    current: str | None
    modes: list[ModeView]


class CommandView(WireModel):
    name: str
    """Typed as ``/name`` at the start of a prompt."""
    description: str
    argumentHint: str


class AgentCommandsResult(WireModel):
    agentId: str
    live: bool
    """Whether a session runs: commands are what a running program reported, so an agent
    without one lists none (``agent.start`` or a prompt starts it)."""
    commands: list[CommandView]


class TimelineCursor(WireModel):
    epoch: str
    seq: int


class AgentTimelineParams(WireModel):
    agentId: str = AgentRef
    after: TimelineCursor | None = Field(default=None, description="entries after this one")
    before: TimelineCursor | None = Field(default=None, description="entries before this one")
    limit: int = Field(default=200, ge=1, le=1000)
    tail: bool = Field(default=False, description="the newest `limit` entries in range")


class AgentTimelineResult(WireModel):
    agentId: str
    epoch: str
    entries: list[TimelineEntry]
    reset: bool = Field(
        description="the cursor's epoch is not the timeline's: drop what you hold and use this"
    )
    hasMore: bool = Field(description="more entries exist in the direction read")
    last: TimelineCursor | None


class PermissionsListParams(WireModel):
    agentId: str | None = Field(default=None, max_length=300)


class PendingPermission(WireModel):
    agentId: str
    request: PermissionRequest


class PermissionsListResult(WireModel):
    requests: list[PendingPermission]


class PermissionRespondParams(WireModel):
    agentId: str = AgentRef
    requestId: str = Field(min_length=1)
    behavior: Literal["allow", "deny"]
    updatedInput: dict[str, Any] | None = Field(default=None, description="allow: edited input")
    message: str | None = Field(default=None, description="deny: why")
    interrupt: bool = Field(default=False, description="deny: also stop the turn")


class PermissionRespondResult(WireModel):
    agentId: str
    requestId: str
    behavior: Literal["allow", "deny"]


class OkResult(WireModel):
    agentId: str
    ok: bool = True


# --- provider.* --------------------------------------------------------------------------------


class AvailabilityView(WireModel):
    status: Literal["ready", "loading", "error", "unavailable"]
    reason: str | None = None
    checkedAt: str | None = None


class ProviderView(WireModel):
    id: str
    label: str
    extends: str | None = Field(description="the provider a custom provider derives from")
    enabled: bool
    order: float | None
    availability: AvailabilityView


class ProviderListParams(WireModel):
    refresh: bool = Field(default=False, description="probe availability now")


class ProviderListResult(WireModel):
    providers: list[ProviderView]


class ProviderDiagnosticParams(WireModel):
    providerId: str = Field(min_length=1)


class ProgramView(WireModel):
    command: str = Field(description="the program the provider runs")
    path: str | None = Field(description="where it was found on the daemon's PATH; null: not found")
    version: str = Field(description="the first line of `--version`, or why there is none")


class ProviderDiagnosticResult(WireModel):
    providerId: str
    label: str
    enabled: bool
    availability: AvailabilityView = Field(
        description="probed now; its reason says what is missing (program, log-in, key)"
    )
    program: ProgramView | None = Field(description="null when the provider runs no program")
    models: int | None = Field(description="how many models it lists; null when not ready")
    modelsError: str | None = Field(default=None, description="why listing the models failed")


class ProviderModelsParams(WireModel):
    providerId: str = Field(min_length=1)


class ProviderFeaturesParams(WireModel):
    providerId: str = Field(min_length=1)
    cwd: str = Field(min_length=1)
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] = Field(default_factory=dict)


class ProviderFeaturesResult(WireModel):
    providerId: str
    features: list[AgentFeature]
    """What a new agent with these settings would offer (``agent.feature.set`` changes one);
    the built-in providers offer none."""


class ThinkingView(WireModel):
    id: str
    label: str


class ModelView(WireModel):
    id: str
    label: str
    default: bool = False
    thinkingOptions: list[ThinkingView] = Field(default_factory=list)


class ProviderModelsResult(WireModel):
    providerId: str
    models: list[ModelView]
    modes: list[ModeView]


# --- notifications --------------------------------------------------------------------------------


class AgentRecordEvent(StreamEvent):
    """``agent.created`` / ``agent.updated`` on the ``agents`` stream."""

    agent: AgentRecord


class AgentDeletedEvent(StreamEvent):
    """``agent.deleted`` on the ``agents`` stream."""

    agentId: str


class AgentTimelineEvent(StreamEvent):
    """``agent.event`` on ``agent:<agentId>``: one numbered timeline entry."""

    agentId: str
    entry: TimelineEntry


NOTIFICATIONS: dict[str, type[StreamEvent]] = {
    "agent.created": AgentRecordEvent,
    "agent.updated": AgentRecordEvent,
    "agent.deleted": AgentDeletedEvent,
    "agent.event": AgentTimelineEvent,
}
"""Agent notification method -> params model (for the protocol schema)."""
