"""The typed inputs and results of the agent port (:mod:`paseo_hookspecs.agents`).

Inputs (``AgentCreate``, ``AgentQuery``, ``PermissionAnswer``) refuse unknown fields, so a
misspelt option is an error rather than silently ignored; results carry the contract's durable
records (:class:`~paseo_hookspecs.records.AgentRecord`) and typed events
(:data:`~paseo_hookspecs.events.AgentEvent`). Every model is frozen: what a plugin is handed is
a value, not a view into the daemon's state.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from paseo_hookspecs.events import AgentEvent, PermissionRequest, PermissionResolution
from paseo_hookspecs.interfaces.agent import PromptImage
from paseo_hookspecs.records import AgentRecord, AgentStatus

__all__ = [
    "AgentCreate",
    "AgentPage",
    "AgentQuery",
    "BranchOff",
    "CheckoutBranch",
    "CheckoutPr",
    "PermissionAnswer",
    "PermissionOutcome",
    "RecordChange",
    "RecordChangeKind",
    "SendResult",
    "SessionExtras",
    "TimelineEntry",
    "TimelinePage",
    "WaitOutcome",
    "WaitResult",
    "WorktreeTarget",
]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)


# --- worktree targets ---------------------------------------------------------------------


class _Target(BaseModel):
    # Worktree targets often arrive from a remote party (a Hub): fields a newer sender adds
    # must not fail the create.
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


class BranchOff(_Target):
    """A new branch ``newBranch`` made from ``base`` (default: the repository's default)."""

    type: Literal["branch-off"] = "branch-off"
    newBranch: str
    base: str | None = None


class CheckoutBranch(_Target):
    """An existing branch checked out in its own worktree."""

    type: Literal["checkout-branch"] = "checkout-branch"
    branch: str


class CheckoutPr(_Target):
    """A pull (change) request's head checked out in its own worktree."""

    type: Literal["checkout-pr"] = "checkout-pr"
    prNumber: int


WorktreeTarget = BranchOff | CheckoutBranch | CheckoutPr
"""Where a new agent works instead of ``cwd`` itself (discriminated by ``type``)."""


# --- inputs -------------------------------------------------------------------------------


class AgentCreate(_Input):
    """Everything ``agent.create`` takes, typed. Fields not given take the defaults of
    ``profile``, then the provider's."""

    provider: str | None = Field(default=None, max_length=100)
    """Provider id, or ``provider/model``; default: the first ready provider."""
    model: str | None = None
    modeId: str | None = None
    thinkingOptionId: str | None = None
    cwd: str | None = None
    """Absolute directory the agent works in (with ``worktree``: a directory of the repository
    the worktree is made from)."""
    workspaceId: str | None = None
    """Alternative to ``cwd``: the workspace to work in."""
    worktree: Annotated[WorktreeTarget, Field(discriminator="type")] | None = None
    """Work in a git worktree of ``cwd``'s repository (made, or reused when it exists)."""
    labels: dict[str, str] = Field(default_factory=dict)
    title: str | None = Field(default=None, max_length=300)
    initialPrompt: str | None = None
    """Sent as the first turn once the agent exists."""
    messageId: str | None = Field(default=None, max_length=200)
    """The initial prompt's message id (stable across retries, so a repeat is recognised)."""
    images: tuple[PromptImage, ...] = ()
    """Images sent with ``initialPrompt``."""
    profile: str | None = None
    """An agent profile's id or name (``daemon.agentProfiles``)."""
    systemPrompt: str | None = None
    mcpServers: dict[str, Any] = Field(default_factory=dict)
    providerOptions: dict[str, Any] = Field(default_factory=dict)
    featureValues: dict[str, Any] = Field(default_factory=dict)
    internal: bool = False
    """The daemon's own helper: never listed, never asks for attention."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment of the agent's programs (never written into the record)."""
    recordFields: dict[str, Any] = Field(default_factory=dict)
    """Plugin-owned fields written into the record before it is first stored (kept verbatim
    as unknown fields, e.g. a relationship ``owner``). Names of the record's own fields are
    refused with ``InvalidParams``."""


class AgentQuery(_Input):
    """Which agents :meth:`~paseo_hookspecs.agents.AgentControl.list` returns; every given
    criterion must hold. Internal agents are never listed."""

    include_archived: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    provider: str | None = None
    statuses: frozenset[AgentStatus] | None = None
    cwd: str | None = None
    """Agents working in exactly this directory."""
    workspace_id: str | None = None
    id_prefix: str | None = None
    """Agents whose id starts with this (ignoring case)."""
    title: str | None = None
    """Agents with exactly this title."""
    newest_first: bool = False


class PermissionAnswer(_Input):
    """A person's (or a policy's) answer to a :class:`~paseo_hookspecs.events.PermissionRequest`."""

    behavior: Literal["allow", "deny"]
    updated_input: dict[str, Any] | None = None
    """Allow: replaces the tool input (the user edited it)."""
    message: str | None = None
    """Deny: why."""
    interrupt: bool = False
    """Deny: also stop the turn."""


# --- results ------------------------------------------------------------------------------


class AgentPage(_Result):
    items: list[AgentRecord]
    next_cursor: str | None = None
    """Pass as ``cursor`` for the next page; ``None`` on the last."""


class SendResult(_Result):
    agent: AgentRecord
    message_id: str
    accepted: bool
    """``False`` when ``message_id`` was already sent (a repeat is ignored)."""


WaitOutcome = Literal["idle", "permission", "error", "closed", "timeout"]


class WaitResult(_Result):
    agent: AgentRecord
    outcome: WaitOutcome
    last_reply: str | None = None
    """The text of the agent's last reply."""
    pending_permissions: list[PermissionRequest] = Field(default_factory=list)


class TimelineEntry(_Result):
    """One numbered, durable event of an agent's timeline. ``epoch`` names one contiguous run
    of ``seq`` numbers (it changes when the timeline is reset); ``seq`` orders entries in it.
    (The stored form, with ``event`` as JSON, is :class:`paseo_hookspecs.records.TimelineEntry`.)
    """

    seq: int
    epoch: str
    timestamp: str
    event: AgentEvent


class TimelinePage(_Result):
    epoch: str
    entries: list[TimelineEntry]
    has_more: bool
    """More entries follow the last one returned (read on from its ``seq``)."""
    reset: bool = False
    """The ``after_seq`` asked for belongs to no entry of this epoch's timeline (it was reset):
    the page starts at the beginning."""


RecordChangeKind = Literal["created", "updated", "deleted"]


class RecordChange(_Result):
    """An agent record was first stored, changed, or deleted (``record``: its last state)."""

    kind: RecordChangeKind
    record: AgentRecord


PermissionOutcome = PermissionResolution | None
"""How a pending request ended: the answer given, or ``None`` when it was withdrawn (the turn
ended or the session closed before anyone answered)."""


class SessionExtras(_Result):
    """What a :class:`~paseo_hookspecs.agents.SessionContributor` adds to one session."""

    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    """``mcpServers`` entries (never stored in the record)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment of the session's programs (never stored in the record)."""
