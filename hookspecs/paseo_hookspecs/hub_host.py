"""What the kernel hands the Hub relationship plugin: agent control and session trust.

A Paseo Hub dispatches work to this daemon over a socket the Hub plugin dials itself; the Hub
never reaches the daemon's RPC server, so everything a Hub can cause passes through the
Protocols below. The kernel implements them and exposes a :class:`HubHost` as the
``hub_host`` attribute of the :class:`~paseo_hookspecs.context.DaemonContext` it passes to
``paseo_startup`` (see :class:`HubCapableContext`); a daemon without it simply offers no Hub
relationship.

Ownership: an agent created for a Hub carries ``owner = {"kind": "daemon", "daemonId",
"executionId"}`` in its record (the field the TypeScript Paseo writes). The plugin only ever
asks about agents through a :class:`HubOwner`, so a Hub can name no agent it does not own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from paseo_hookspecs.agents.models import BranchOff, CheckoutBranch, CheckoutPr, WorktreeTarget
from paseo_hookspecs.context import DaemonContext
from paseo_hookspecs.errors import PaseoError

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

__all__ = [
    "AgentControl",
    "AgentObserver",
    "AgentSnapshot",
    "BranchOff",
    "CheckoutBranch",
    "CheckoutPr",
    "CreateFailed",
    "HubAgentCreate",
    "HubAgentValidate",
    "HubCapableContext",
    "HubCreateError",
    "HubHost",
    "HubOwner",
    "PreapprovedTool",
    "ProviderOptionsInvalid",
    "ToolPolicyUnsupported",
    "ValidationIssue",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


class HubAgentCreate(_Model):
    """An agent to create for a Hub execution, through the trusted-client creation path."""

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
    worktree: WorktreeTarget | None = Field(default=None, discriminator="type")
    autoArchive: bool = False
    """Archive the agent (and its worktree) through the shared lifecycle policy when it ends."""


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

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    status: Literal["initializing", "idle", "running", "error", "closed"]
    archived: bool = False
    """``archivedAt`` is set: the agent is finished for good."""
    owner: HubOwner | None = None
    """The record's relationship owner (``None`` for an agent no Hub owns)."""


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


class AgentObserver(Protocol):
    """Told about agent activity; implemented by the plugin. Both methods are called on the
    daemon's loop, in the order things happened for one agent, and must not block. The first
    call for a new agent is :meth:`agent_updated` with its owner, made when its record is
    first written and before any of its events, so the plugin can route them."""

    def agent_event(self, agent_id: str, event: Mapping[str, Any]) -> None:
        """An event the agent emitted, as it crosses the wire (``type`` plus its fields)."""

    def agent_updated(self, snapshot: AgentSnapshot) -> None:
        """The agent's status, archive state or other snapshot fields changed."""


class AgentControl(Protocol):
    """Agent operations on behalf of a Hub. Every method may be called for any owner of the
    relationship; none may touch an agent whose record lacks exactly that owner."""

    async def find_owned(self, owner: HubOwner) -> AgentSnapshot | None:
        """The agent whose record carries ``owner`` (archived ones included), else ``None``."""

    async def list_owned(self, daemon_id: str) -> list[tuple[HubOwner, AgentSnapshot]]:
        """Every agent whose record owner has ``daemonId == daemon_id``."""

    async def create_owned(self, spec: HubAgentCreate) -> AgentSnapshot:
        """Create the agent through the path trusted clients use (workspace placement,
        worktree target, the shared auto-archive policy), with ``spec.owner`` in the record,
        then send ``spec.prompt`` as message ``spec.messageId``.

        Durable on return: the record with its owner is written before this returns, so a
        create the Hub retries finds it with :meth:`find_owned`. Raises a
        :class:`HubCreateError` subclass (and writes nothing) when the agent cannot be made.
        """

    async def ensure_loaded(self, agent_id: str) -> AgentSnapshot:
        """Bring an owned, unarchived agent back to life if no provider runtime holds it (a
        daemon restart): resume its provider session from the persistence handle so the
        snapshot says ``idle`` or ``running``. Returns the snapshot unchanged when the agent is
        live or archived. Raises :class:`CreateFailed` when the session cannot be resumed."""

    async def send_prompt(self, agent_id: str, prompt: str, message_id: str) -> AgentSnapshot:
        """Start a turn with ``prompt`` as user message ``message_id``; returns the snapshot
        after the turn was accepted (``running``)."""

    async def interrupt(self, agent_id: str) -> None:
        """Cancel the running turn; idempotent (nothing running is success)."""

    async def archive(self, agent_id: str) -> None:
        """Stop and archive the agent through the shared lifecycle policy; idempotent."""

    async def validate(self, request: HubAgentValidate) -> list[ValidationIssue]:
        """What is wrong with ``request`` for its provider (empty: valid). An unknown
        provider is an issue at path ``provider``, not an exception."""

    def observe(self, observer: AgentObserver) -> Callable[[], None]:
        """Start telling ``observer`` about every agent; returns the function that stops it.
        The plugin filters to its owned agents itself, so the kernel need not. The plugin
        stops observing in ``paseo_shutdown``: the kernel must call that hook before it stops
        agents, so turns a shutdown interrupts keep their resume intents."""


class HubHost(Protocol):
    """Everything the Hub plugin needs from the kernel."""

    @property
    def agents(self) -> AgentControl:
        """Agent control on behalf of the relationship."""

    @property
    def daemon_public_key(self) -> str:
        """The daemon's public key as sent in enrollment (``daemon-keypair.json``'s
        ``publicKey``, base64)."""

    def is_trusted_local(self, ctx: RpcContext) -> bool:
        """Whether the calling session arrived through a server-observed local transport (a
        unix socket, or a loopback peer holding the local credential) and carried no browser
        ``Origin``. Nothing the client said in ``server.hello`` counts."""


@runtime_checkable
class HubCapableContext(DaemonContext, Protocol):
    """A daemon context that offers the Hub relationship."""

    @property
    def hub_host(self) -> HubHost:
        """The kernel side of the Hub relationship."""
