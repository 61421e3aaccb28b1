"""The agent record: one JSON file per agent under ``agents/{sanitized-cwd}/{agentId}.json``.

Ownership lives in ``workspaceId``; ``cwd`` is only where the agent runs (and names the storage
directory, see :func:`paseo_hookspecs.records.layout.sanitize_cwd`). Newer TypeScript writers
add fields such as ``owner``, ``titleManuallySet``, ``finishObligations`` and ``queuedPrompts``;
they are kept verbatim as unknown fields.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from paseo_hookspecs.events import Usage
from paseo_hookspecs.records._base import RecordModel

__all__ = [
    "AgentBudget",
    "AgentFeature",
    "AgentFeatureSelect",
    "AgentFeatureToggle",
    "AgentRecord",
    "AgentSelectOption",
    "AgentStatus",
    "AttentionReason",
    "PersistenceHandle",
    "RuntimeInfo",
    "SerializableConfig",
]

AgentStatus = Literal["initializing", "idle", "running", "error", "closed"]
"""Last known lifecycle status. ``closed`` is resumable with no live provider runtime; archive is
separate (``archivedAt``)."""

AttentionReason = Literal["finished", "error", "permission", "budget"]
"""Why an agent asks for the user's attention (``budget``: it spent its budget; added in 2.0)."""


class SerializableConfig(RecordModel):
    """The agent's session configuration, as persisted (every field optional and nullable)."""

    title: str | None = None
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] | None = None
    providerOptions: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None
    systemPrompt: str | None = None
    mcpServers: dict[str, Any] | None = None


class RuntimeInfo(RecordModel):
    """What the live provider runtime reported last (provider, session, model, mode)."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"extra"})

    provider: str
    sessionId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    modeId: str | None = None
    extra: dict[str, Any] | None = None


class PersistenceHandle(RecordModel):
    """How to resume the provider session (a Codex thread id, a Claude resume token, ...)."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"metadata"})

    provider: str
    sessionId: str
    nativeHandle: Any = None
    metadata: dict[str, Any] | None = None


class AgentSelectOption(RecordModel):
    """One choice of a select feature."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset(
        {"description", "family", "isDefault", "metadata"}
    )

    id: str
    label: str
    description: str | None = None
    family: str | None = None
    isDefault: bool | None = None
    metadata: dict[str, Any] | None = None


class AgentFeatureToggle(RecordModel):
    """A provider-reported on/off feature (``type: "toggle"``)."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"description", "tooltip", "icon"})

    type: Literal["toggle"]
    id: str
    label: str
    description: str | None = None
    tooltip: str | None = None
    icon: str | None = None
    value: bool


class AgentFeatureSelect(RecordModel):
    """A provider-reported one-of-many feature (``type: "select"``); ``value`` may be null."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"description", "tooltip", "icon"})

    type: Literal["select"]
    id: str
    label: str
    description: str | None = None
    tooltip: str | None = None
    icon: str | None = None
    value: str | None
    options: list[AgentSelectOption]


AgentFeature = Annotated[AgentFeatureToggle | AgentFeatureSelect, Field(discriminator="type")]
"""A provider feature, discriminated on ``type``."""


class AgentBudget(RecordModel):
    """What an agent may spend over its life (added in 2.0). Tokens count input, output, cache
    read and cache write together, as the providers reported them; either cap may be unset."""

    tokens: int | None = None
    usd: float | None = None


class AgentRecord(RecordModel):
    """One agent, as stored in ``agents/{sanitized-cwd}/{agentId}.json``.

    ``labels`` defaults to ``{}`` and ``lastStatus`` to ``closed``; both are always written.
    """

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"labels", "lastStatus"})
    NOT_NULL: ClassVar[frozenset[str]] = frozenset(
        {
            "workspaceId",
            "lastActivityAt",
            "runtimeInfo",
            "features",
            "requiresAttention",
            "internal",
            "deletedAt",
        }
    )

    id: str
    provider: str
    cwd: str
    workspaceId: str | None = None
    createdAt: str
    updatedAt: str
    lastActivityAt: str | None = None
    lastUserMessageAt: str | None = None
    title: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    lastStatus: AgentStatus = "closed"
    lastModeId: str | None = None
    config: SerializableConfig | None = None
    runtimeInfo: RuntimeInfo | None = None
    features: list[AgentFeature] | None = None
    persistence: PersistenceHandle | None = None
    lastError: str | None = None
    requiresAttention: bool | None = None
    attentionReason: AttentionReason | None = None
    attentionTimestamp: str | None = None
    internal: bool | None = None
    archivedAt: str | None = None
    deletedAt: str | None = None
    """When ``paseo delete`` moved the agent to the trash: a recoverable tombstone (record,
    timeline and persistence handle kept) until the retention period after this instant."""
    budget: AgentBudget | None = None
    """The agent's spending cap (added in 2.0): once reached, its prompts are refused."""
    lastUsage: Usage | None = None
    """What the provider reported for the last turn that reported usage (added in 2.0): what
    clients show beside the agent (the TypeScript snapshot's ``lastUsage``)."""
