"""Outbound session messages: each ``type`` with its payload model (see :data:`OUTBOUND`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from paseo_tswire.models.agent import (
    AgentMode,
    AgentSnapshot,
    Feature,
    ProjectPlacement,
    SelectOption,
)
from paseo_tswire.models.settings import DaemonConfigChanged, RestartRequested
from paseo_tswire.models.timeline import (
    Cursor,
    PermissionRequest,
    Resolution,
    StreamEvent,
    TimelineEntry,
)
from paseo_tswire.models.voice import ServerCapabilities
from paseo_tswire.models.wire import Wire


class ServerInfo(Wire):
    status: Literal["server_info"] = "server_info"
    serverId: str = Field(min_length=1)
    hostname: str | None
    version: str | None
    capabilities: ServerCapabilities | None = None
    features: dict[str, bool]


class AgentCreated(Wire):
    status: Literal["agent_created"] = "agent_created"
    agentId: str
    requestId: str
    agent: AgentSnapshot


class AgentCreateFailed(Wire):
    status: Literal["agent_create_failed"] = "agent_create_failed"
    requestId: str
    error: str
    errorCode: str | None = None


class AgentResumed(Wire):
    status: Literal["agent_resumed"] = "agent_resumed"
    agentId: str
    requestId: str
    timelineSize: int | None = None
    agent: AgentSnapshot


class AgentRefreshed(Wire):
    status: Literal["agent_refreshed"] = "agent_refreshed"
    agentId: str
    requestId: str
    timelineSize: int | None = None


class ShutdownRequested(Wire):
    status: Literal["shutdown_requested"] = "shutdown_requested"
    clientId: str
    requestId: str


STATUS_PAYLOADS: dict[str, type[Wire]] = {
    "server_info": ServerInfo,
    "agent_created": AgentCreated,
    "agent_create_failed": AgentCreateFailed,
    "agent_resumed": AgentResumed,
    "agent_refreshed": AgentRefreshed,
    "shutdown_requested": ShutdownRequested,
    "restart_requested": RestartRequested,
    "daemon_config_changed": DaemonConfigChanged,
}


class Pong(Wire):
    requestId: str
    clientSentAt: int | None = None
    serverReceivedAt: int
    serverSentAt: int


class RpcError(Wire):
    requestId: str
    requestType: str | None = None
    error: str
    code: str | None = None


class DirectoryEntry(Wire):
    agent: AgentSnapshot
    project: ProjectPlacement


class PageInfo(Wire):
    nextCursor: str | None
    prevCursor: str | None
    hasMore: bool


class FetchAgents(Wire):
    requestId: str
    subscriptionId: str | None = None
    entries: list[DirectoryEntry]
    pageInfo: PageInfo


class AgentHistory(Wire):
    requestId: str
    entries: list[DirectoryEntry]
    pageInfo: PageInfo


class ClosedAgent(Wire):
    agentId: str
    archivedAt: str


class ClosedTerminal(Wire):
    terminalId: str
    success: bool


class CloseItems(Wire):
    agents: list[ClosedAgent]
    terminals: list[ClosedTerminal]
    requestId: str


class FetchAgent(Wire):
    requestId: str
    agent: AgentSnapshot | None
    project: ProjectPlacement | None = None
    error: str | None


class Window(Wire):
    minSeq: int = Field(ge=0)
    maxSeq: int = Field(ge=0)
    nextSeq: int = Field(ge=0)


class FetchTimeline(Wire):
    requestId: str
    agentId: str
    agent: AgentSnapshot | None
    direction: Literal["tail", "before", "after"]
    projection: Literal["projected", "canonical"]
    epoch: str
    reset: bool
    staleCursor: bool
    gap: bool
    window: Window
    startCursor: Cursor | None
    endCursor: Cursor | None
    hasOlder: bool
    hasNewer: bool
    entries: list[TimelineEntry]
    error: str | None


class AgentAction(Wire):
    """``set_agent_{mode,model,thinking,feature}_response`` and ``update_agent_response``."""

    requestId: str
    agentId: str
    accepted: bool
    error: str | None


class CancelAgent(Wire):
    requestId: str
    agentId: str
    agent: AgentSnapshot | None


class ClearAttention(Wire):
    requestId: str
    agentId: str | list[str]
    agents: list[AgentSnapshot]


class SendMessage(Wire):
    requestId: str
    agentId: str
    accepted: bool
    error: str | None


class WaitForFinish(Wire):
    requestId: str
    status: Literal["idle", "error", "permission", "timeout"]
    final: AgentSnapshot | None
    error: str | None
    lastMessage: str | None


class AgentDeleted(Wire):
    agentId: str
    requestId: str


class AgentArchived(Wire):
    agentId: str
    archivedAt: str
    requestId: str


class AgentUpsert(Wire):
    kind: Literal["upsert"] = "upsert"
    agent: AgentSnapshot
    project: ProjectPlacement | None = None


class AgentRemove(Wire):
    kind: Literal["remove"] = "remove"
    agentId: str


class AgentStream(Wire):
    agentId: str
    event: StreamEvent
    timestamp: str
    seq: int | None = Field(default=None, ge=0)
    epoch: str | None = None


class PermissionRequestPush(Wire):
    agentId: str
    request: PermissionRequest


class PermissionResolvedPush(Wire):
    agentId: str
    requestId: str
    resolution: Resolution


class ModelDefinition(Wire):
    provider: str
    id: str
    label: str
    description: str | None = None
    isDefault: bool | None = None
    metadata: dict[str, Any] | None = None
    thinkingOptions: list[SelectOption] | None = None
    defaultThinkingOptionId: str | None = None


class ProviderEntry(Wire):
    provider: str
    status: Literal["ready", "loading", "error", "unavailable"]
    enabled: bool
    error: str | None = None
    models: list[ModelDefinition] | None = None
    modes: list[AgentMode] | None = None
    fetchedAt: str | None = None
    label: str | None = None
    defaultModeId: str | None = None


class ProvidersSnapshot(Wire):
    entries: list[ProviderEntry]
    generatedAt: str
    requestId: str


class ProvidersSnapshotUpdate(Wire):
    entries: list[ProviderEntry]
    generatedAt: str


class RefreshProvidersSnapshot(Wire):
    requestId: str
    acknowledged: bool


class ProviderModels(Wire):
    provider: str
    models: list[ModelDefinition] | None = None
    error: str | None = None
    fetchedAt: str
    requestId: str


class ProviderModes(Wire):
    provider: str
    modes: list[AgentMode] | None = None
    error: str | None = None
    fetchedAt: str
    requestId: str


class ProviderAvailability(Wire):
    provider: str
    available: bool
    error: str | None = None


class AvailableProviders(Wire):
    providers: list[ProviderAvailability]
    error: str | None = None
    fetchedAt: str
    requestId: str


class SlashCommand(Wire):
    name: str
    description: str
    argumentHint: str


class Commands(Wire):
    agentId: str
    commands: list[SlashCommand]
    error: str | None
    requestId: str


class ProviderFeatures(Wire):
    provider: str
    features: list[Feature] | None = None
    error: str | None = None
    fetchedAt: str
    requestId: str


class CheckoutError(Wire):
    code: Literal["NOT_GIT_REPO", "NOT_ALLOWED", "MERGE_CONFLICT", "UNKNOWN"]
    message: str


class Worktree(Wire):
    worktreePath: str
    createdAt: str
    branchName: str | None = None
    head: str | None = None


class WorktreeList(Wire):
    worktrees: list[Worktree]
    error: CheckoutError | None
    requestId: str


class WorktreeArchive(Wire):
    success: bool
    removedAgents: list[str] | None = None
    error: CheckoutError | None
    requestId: str


OUTBOUND: dict[str, type[Wire]] = {
    "pong": Pong,
    "rpc_error": RpcError,
    "fetch_agents_response": FetchAgents,
    "fetch_agent_response": FetchAgent,
    "fetch_agent_history_response": AgentHistory,
    "close_items_response": CloseItems,
    "fetch_agent_timeline_response": FetchTimeline,
    "set_agent_mode_response": AgentAction,
    "set_agent_model_response": AgentAction,
    "set_agent_thinking_response": AgentAction,
    "set_agent_feature_response": AgentAction,
    "update_agent_response": AgentAction,
    "cancel_agent_response": CancelAgent,
    "clear_agent_attention_response": ClearAttention,
    "send_agent_message_response": SendMessage,
    "wait_for_finish_response": WaitForFinish,
    "agent_deleted": AgentDeleted,
    "agent_archived": AgentArchived,
    "agent_stream": AgentStream,
    "agent_permission_request": PermissionRequestPush,
    "agent_permission_resolved": PermissionResolvedPush,
    "get_providers_snapshot_response": ProvidersSnapshot,
    "providers_snapshot_update": ProvidersSnapshotUpdate,
    "refresh_providers_snapshot_response": RefreshProvidersSnapshot,
    "list_provider_models_response": ProviderModels,
    "list_provider_modes_response": ProviderModes,
    "list_available_providers_response": AvailableProviders,
    "list_commands_response": Commands,
    "list_provider_features_response": ProviderFeatures,
    "paseo_worktree_list_response": WorktreeList,
    "paseo_worktree_archive_response": WorktreeArchive,
}
"""Every outbound session ``type`` but ``status`` and ``agent_update`` (see
:func:`paseo_tswire.envelope.validate_outbound`), with its payload model."""
