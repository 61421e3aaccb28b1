"""The Hub relationship's own models: who owns an agent, what a Hub may see of it, what a Hub
create asks for, and the structured errors a failed create answers with.

Ownership: an agent created for a Hub carries ``owner = {"kind": "daemon", "daemonId",
"executionId"}`` in its record (the field the TypeScript Paseo writes), and the granted tool
names in ``hubToolPolicy``. Both are plugin-owned record fields
(:attr:`paseo_hookspecs.agents.AgentCreate.recordFields`): the kernel stores them verbatim and
never reads them.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from paseo_hookspecs.agents import WorktreeTarget
from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.records import AgentRecord
from pydantic import BaseModel, ConfigDict, Field, ValidationError

OWNER_FIELD = "owner"
"""Record field holding the relationship owner."""
POLICY_FIELD = "hubToolPolicy"
"""Record field holding the granted tool names (``mcp__<server>__<tool>``)."""
EXECUTION_LABEL = "paseo.hub/execution"
"""Label naming the Hub execution an agent serves (for people listing agents)."""
SNAPSHOT_FIELDS = ("provider", "cwd", "title", "createdAt", "updatedAt", "lastError")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class HubOwner(_Model):
    """The relationship owner stored in an agent record as ``owner``."""

    kind: Literal["daemon"] = "daemon"
    daemonId: str
    """The relationship's daemon id (one relationship per daemon)."""
    executionId: str
    """The Hub execution the agent serves; unique per relationship."""


class PreapprovedTool(_Model):
    """One MCP tool the agent may call without asking (``mcp__<server>__<tool>``)."""

    kind: Literal["mcp"] = "mcp"
    server: str
    tool: str

    @property
    def name(self) -> str:
        """The tool's name as the agent's program asks for it."""
        return f"mcp__{self.server}__{self.tool}"


class HubAgentCreate(_Model):
    """An agent to create for a Hub execution."""

    owner: HubOwner
    provider: str
    cwd: str
    prompt: str
    """The initial turn, sent with ``messageId`` once the agent exists."""
    messageId: str
    """Stable across replays of the same execution, so a replayed turn is recognisable."""
    model: str | None = None
    modeId: str | None = None
    thinkingOptionId: str | None = None
    providerOptions: dict[str, Any] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment of the agent process (the Hub's config and materialised secrets)."""
    mcpServers: dict[str, Any] = Field(default_factory=dict)
    """MCP servers of the agent; always contains ``hub`` (the execution's finish endpoint)."""
    preapprovedTools: tuple[PreapprovedTool, ...] = ()
    """Exactly the tools to pre-approve; every ``server`` names a key of ``mcpServers``."""
    worktree: Annotated[WorktreeTarget, Field(discriminator="type")] | None = None
    autoArchive: bool = False
    """Archive the agent when its initial turn completes."""


class HubAgentValidate(_Model):
    """An agent configuration the Hub wants checked before it installs a config naming it."""

    provider: str
    model: str | None = None
    modeId: str | None = None
    thinkingOptionId: str | None = None
    providerOptions: dict[str, Any] | None = None


class ValidationIssue(_Model):
    path: str
    message: str


class AgentSnapshot(BaseModel):
    """The current state of an agent as a Hub may see it (``id`` and ``status`` at least;
    further fields such as ``provider``, ``cwd``, ``title``, ``model`` pass through)."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    id: str
    status: Literal["initializing", "idle", "running", "error", "closed"]
    archived: bool = False
    """``archivedAt`` is set: the agent is finished for good."""
    owner: HubOwner | None = None
    """The record's relationship owner (``None`` for an agent no Hub owns)."""


def owner_of(record: AgentRecord) -> HubOwner | None:
    """The Hub owner ``record`` carries (``None``: no Hub's agent)."""
    owner = (record.model_extra or {}).get(OWNER_FIELD)
    if not isinstance(owner, dict):
        return None
    try:
        return HubOwner.model_validate(owner)
    except ValidationError:
        return None  # another kind of owner (a TypeScript writer's): no Hub's agent


def grants_of(record: AgentRecord) -> frozenset[str]:
    """The tool names pre-approved for ``record``'s agent (empty unless a Hub owns it)."""
    if owner_of(record) is None:
        return frozenset()
    tools = (record.model_extra or {}).get(POLICY_FIELD)
    if not isinstance(tools, list):
        return frozenset()
    return frozenset(t for t in tools if isinstance(t, str))


def usage_payload(usage: dict[str, Any]) -> dict[str, Any]:
    """Usage as ``agent.event`` has it, plus the TypeScript daemon's names for the same
    figures (``totalCostUsd``, ``contextWindowMaxTokens``): a Hub reads either."""
    named = {"costUsd": "totalCostUsd", "contextWindow": "contextWindowMaxTokens"}
    return {**usage, **{named[k]: v for k, v in usage.items() if k in named}}


def snapshot_of(record: AgentRecord) -> AgentSnapshot:
    """What a Hub may see of an agent record."""
    extra: dict[str, Any] = {
        key: getattr(record, key) for key in SNAPSHOT_FIELDS if getattr(record, key) is not None
    }
    if record.config is not None and record.config.model:
        extra["model"] = record.config.model
    if record.lastUsage is not None:
        # Passed through by the Hub as the TypeScript daemon's snapshot carries it.
        extra["lastUsage"] = usage_payload(
            record.lastUsage.model_dump(mode="json", exclude_none=True)
        )
    return AgentSnapshot(
        id=record.id,
        status=record.lastStatus,
        archived=record.archivedAt is not None,
        owner=owner_of(record),
        **extra,
    )


class HubCreateError(PaseoError):
    """A create the Hub asked for failed; ``wire_error`` is the structured ``error`` object."""

    code: ClassVar[str] = "create_failed"

    def wire_error(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


class CreateFailed(HubCreateError):
    """Anything else: unknown provider, bad cwd, worktree failure, provider start failure."""

    code: ClassVar[str] = "create_failed"


class ProviderOptionsInvalid(HubCreateError):
    """``providerOptions`` do not match the provider's schema."""

    code: ClassVar[str] = "provider_options_invalid"

    def __init__(self, message: str, *, provider: str, issues: list[ValidationIssue]) -> None:
        super().__init__(message)
        self.provider = provider
        self.issues = issues

    def wire_error(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "provider": self.provider,
            "issues": [issue.model_dump() for issue in self.issues],
            "message": self.message,
        }


class ToolPolicyUnsupported(HubCreateError):
    """The provider cannot pre-approve exactly the requested MCP tools."""

    code: ClassVar[str] = "tool_policy_unsupported"

    def __init__(self, message: str, *, provider: str) -> None:
        super().__init__(message)
        self.provider = provider

    def wire_error(self) -> dict[str, Any]:
        return {"code": self.code, "provider": self.provider, "message": self.message}
