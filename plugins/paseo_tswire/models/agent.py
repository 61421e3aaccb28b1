"""The agent snapshot (``AgentSnapshotPayloadSchema``) and the project placement beside it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from paseo_tswire.models.timeline import PermissionRequest, Usage
from paseo_tswire.models.wire import Wire

AgentStatus = Literal["initializing", "idle", "running", "error", "closed"]
AttentionReason = Literal["finished", "error", "permission"]


class AgentMode(Wire):
    id: str
    label: str
    description: str | None = None


class SelectOption(Wire):
    id: str
    label: str
    description: str | None = None
    isDefault: bool | None = None
    metadata: dict[str, Any] | None = None


class FeatureToggle(Wire):
    type: Literal["toggle"] = "toggle"
    id: str
    label: str
    description: str | None = None
    tooltip: str | None = None
    icon: str | None = None
    value: bool


class FeatureSelect(Wire):
    type: Literal["select"] = "select"
    id: str
    label: str
    description: str | None = None
    tooltip: str | None = None
    icon: str | None = None
    value: str | None
    options: list[SelectOption]


Feature = Annotated[FeatureToggle | FeatureSelect, Field(discriminator="type")]


class Capabilities(Wire):
    """Exactly the six flags the client requires."""

    supportsStreaming: bool
    supportsSessionPersistence: bool
    supportsDynamicModes: bool
    supportsMcpServers: bool
    supportsReasoningStream: bool
    supportsToolInvocations: bool


class Persistence(Wire):
    provider: str
    sessionId: str
    nativeHandle: str | None = None
    metadata: dict[str, Any] | None = None


class RuntimeInfo(Wire):
    provider: str
    sessionId: str | None
    model: str | None = None
    thinkingOptionId: str | None = None
    modeId: str | None = None
    extra: dict[str, Any] | None = None


class AgentSnapshot(Wire):
    id: str
    provider: str
    cwd: str
    model: str | None
    features: list[Feature] | None = None
    thinkingOptionId: str | None = None
    effectiveThinkingOptionId: str | None = None
    createdAt: str
    updatedAt: str
    lastUserMessageAt: str | None
    status: AgentStatus
    capabilities: Capabilities
    currentModeId: str | None
    availableModes: list[AgentMode]
    pendingPermissions: list[PermissionRequest]
    persistence: Persistence | None
    runtimeInfo: RuntimeInfo | None = None
    lastUsage: Usage | None = None
    lastError: str | None = None
    title: str | None
    labels: dict[str, str]
    requiresAttention: bool | None = None
    attentionReason: AttentionReason | None = None
    attentionTimestamp: str | None = None
    archivedAt: str | None = None


class CheckoutNotGit(Wire):
    cwd: str
    isGit: Literal[False] = False
    currentBranch: None
    remoteUrl: None
    isPaseoOwnedWorktree: Literal[False] = False
    mainRepoRoot: None


class CheckoutGit(Wire):
    """A git checkout: Paseo-owned worktrees carry their main repository's root."""

    cwd: str
    isGit: Literal[True] = True
    currentBranch: str | None
    remoteUrl: str | None
    worktreeRoot: str | None = None
    isPaseoOwnedWorktree: bool
    mainRepoRoot: str | None

    @model_validator(mode="after")
    def _owned_has_root(self) -> CheckoutGit:
        if self.isPaseoOwnedWorktree and self.mainRepoRoot is None:
            raise ValueError("a Paseo-owned worktree names its mainRepoRoot")
        return self


class ProjectPlacement(Wire):
    projectKey: str
    projectName: str
    checkout: CheckoutNotGit | CheckoutGit
