"""Inbound session messages this transport handles (unknown keys are ignored, as zod strips
them). A message whose ``type`` is handled but whose fields do not validate is answered
``rpc_error`` with ``invalid_message``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from paseo_tswire.models.wire import Inbound


class Request(Inbound):
    requestId: str


class Image(Inbound):
    data: str
    mimeType: str


class DirectoryFilter(Inbound):
    labels: dict[str, str] | None = None
    projectKeys: list[str] | None = None
    statuses: list[str] | None = None
    includeArchived: bool | None = None
    requiresAttention: bool | None = None
    thinkingOptionId: str | None = None


class Page(Inbound):
    limit: int = Field(ge=1, le=200)
    cursor: str | None = Field(default=None, min_length=1)


class Subscribe(Inbound):
    subscriptionId: str | None = None


class AgentSort(Inbound):
    key: Literal["status_priority", "created_at", "updated_at", "title"]
    direction: Literal["asc", "desc"]


class FetchAgents(Request):
    scope: Literal["active"] | None = None
    filter: DirectoryFilter | None = None
    sort: list[AgentSort] | None = None
    page: Page | None = None
    subscribe: Subscribe | None = None


class CloseItems(Request):
    agentIds: list[str] = Field(default_factory=list)
    terminalIds: list[str] = Field(default_factory=list)


class AgentRef(Request):
    """``fetch_agent_request``, ``delete``, ``archive``, ``refresh``: an id, prefix or title."""

    agentId: str


class OptionalRequestAgentRef(Inbound):
    """``cancel_agent_request`` (its ``requestId`` is optional)."""

    agentId: str
    requestId: str | None = None


class SendMessage(Request):
    agentId: str
    text: str
    messageId: str | None = None
    images: list[Image] | None = None


class WaitForFinish(Request):
    agentId: str
    timeoutMs: int | None = Field(default=None, gt=0)


class SessionConfig(Inbound):
    provider: str
    cwd: str
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] | None = None
    title: str | None = None
    systemPrompt: str | None = None
    mcpServers: dict[str, Any] | None = None


class GitSetup(Inbound):
    """``GitSetupOptionsSchema``: a new agent's worktree (``createWorktree``)."""

    baseBranch: str | None = None
    createNewBranch: bool | None = None
    newBranchName: str | None = None
    createWorktree: bool | None = None
    worktreeSlug: str | None = None
    refName: str | None = Field(default=None, min_length=1)
    action: Literal["branch-off", "checkout"] | None = None
    githubPrNumber: int | None = Field(default=None, gt=0)


class CreateAgent(Request):
    config: SessionConfig
    workspaceId: str | None = None
    worktreeName: str | None = None
    git: GitSetup | None = None
    initialPrompt: str | None = None
    clientMessageId: str | None = None
    outputSchema: dict[str, Any] | None = None
    images: list[Image] | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class ImportAgent(Request):
    provider: str
    sessionId: str
    cwd: str | None = None
    labels: dict[str, str] | None = None


class PersistenceHandle(Inbound):
    provider: str
    sessionId: str
    nativeHandle: str | None = None
    metadata: dict[str, Any] | None = None


class ResumeOverrides(Inbound):
    """The part of ``overrides`` (a partial session config) an import takes."""

    cwd: str | None = None
    title: str | None = None


class ResumeAgent(Request):
    handle: PersistenceHandle | None
    overrides: ResumeOverrides | None = None


class DraftConfig(Inbound):
    provider: str
    cwd: str
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] | None = None


class ListCommands(Request):
    agentId: str
    draftConfig: DraftConfig | None = None


class ListProviderFeatures(Request):
    draftConfig: DraftConfig


class UpdateAgent(Request):
    agentId: str
    name: str | None = None
    labels: dict[str, str] | None = None


class Cursor(Inbound):
    epoch: str
    seq: int = Field(ge=0)


class FetchTimeline(Request):
    agentId: str
    direction: Literal["tail", "before", "after"] = "tail"
    cursor: Cursor | None = None
    limit: int | None = Field(default=None, ge=0)
    projection: Literal["projected", "canonical"] = "projected"


class SetMode(Request):
    agentId: str
    modeId: str


class SetModel(Request):
    agentId: str
    modelId: str | None


class SetThinking(Request):
    agentId: str
    thinkingOptionId: str | None


class SetFeature(Request):
    agentId: str
    featureId: str
    value: Any = None


class PermissionResponse(Inbound):
    behavior: Literal["allow", "deny"]
    selectedActionId: str | None = None
    updatedInput: dict[str, Any] | None = None
    message: str | None = None
    interrupt: bool | None = None


class PermissionAnswer(Inbound):
    """``agent_permission_response``: fire and forget (no requestId of its own)."""

    agentId: str
    requestId: str
    response: PermissionResponse


class ClearAttention(Inbound):
    agentId: str | list[str]
    requestId: str | None = None


class Providers(Request):
    cwd: str | None = None
    providers: list[str] | None = None


class ProviderRef(Request):
    provider: str
    cwd: str | None = None


class WorktreeList(Request):
    cwd: str | None = None
    repoRoot: str | None = None


class WorktreeArchive(Request):
    worktreePath: str | None = None
    repoRoot: str | None = None
    branchName: str | None = None


class Ping(Request):
    clientSentAt: int | None = None


class Heartbeat(Inbound):
    """``client_heartbeat`` (no reply)."""

    deviceType: Literal["web", "mobile"]
    focusedAgentId: str | None = None
    lastActivityAt: str | None = None
    appVisible: bool


class PushToken(Inbound):
    """``register_push_token`` (no reply)."""

    token: str
