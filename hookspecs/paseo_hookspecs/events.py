"""The one event vocabulary every agent provider emits.

Names and shapes follow the Paseo Hub's stream events (``thread_started``, ``turn_started``,
``turn_completed``, ``turn_failed``, ``turn_canceled``, ``timeline``, ``permission_requested``,
``permission_resolved``, ``attention_required``) so events reach a Hub unchanged. Providers
translate their program's native stream into these models; the agent manager numbers them,
persists them in the timeline and fans them out to clients and event taps.

Text arrives in pieces: a provider emits an ``assistant_message`` (or ``reasoning``) timeline
item per chunk, all chunks of one message sharing ``messageId``; ``text`` is the chunk, not the
accumulated text. The agent manager coalesces consecutive chunks before they reach clients.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Event(BaseModel):
    # Events are produced by this process and consumed by clients: unknown fields are kept so
    # a provider can attach extra diagnostics without a contract change.
    model_config = ConfigDict(extra="allow", defer_build=True)


# --------------------------------------------------------------------------- tool details


class ShellDetail(_Event):
    type: Literal["shell"] = "shell"
    command: str
    cwd: str | None = None
    output: str | None = None
    exitCode: int | None = None


class ReadDetail(_Event):
    type: Literal["read"] = "read"
    path: str
    content: str | None = None


class EditDetail(_Event):
    type: Literal["edit"] = "edit"
    path: str
    oldText: str | None = None
    newText: str | None = None
    diff: str | None = None


class WriteDetail(_Event):
    type: Literal["write"] = "write"
    path: str
    content: str | None = None


class SearchDetail(_Event):
    type: Literal["search"] = "search"
    query: str
    path: str | None = None
    results: str | None = None


class FetchDetail(_Event):
    type: Literal["fetch"] = "fetch"
    url: str
    result: str | None = None


class SubAgentDetail(_Event):
    type: Literal["sub_agent"] = "sub_agent"
    description: str
    agentType: str | None = None
    result: str | None = None


class PlanDetail(_Event):
    type: Literal["plan"] = "plan"
    text: str


class OtherDetail(_Event):
    type: Literal["other"] = "other"
    input: Any = None
    output: Any = None


AnyToolDetail = (
    ShellDetail
    | ReadDetail
    | EditDetail
    | WriteDetail
    | SearchDetail
    | FetchDetail
    | SubAgentDetail
    | PlanDetail
    | OtherDetail
)
"""Any tool detail (the plain union, for annotating functions that build one)."""

ToolDetail = Annotated[AnyToolDetail, Field(discriminator="type")]
"""A tool detail as it appears in events, discriminated on ``type``."""

ToolStatus = Literal["running", "completed", "failed", "canceled"]

# --------------------------------------------------------------------------- timeline items


class UserMessageItem(_Event):
    type: Literal["user_message"] = "user_message"
    text: str
    messageId: str | None = None


class AssistantMessageItem(_Event):
    type: Literal["assistant_message"] = "assistant_message"
    text: str
    """A chunk of the message (see the module docstring)."""
    messageId: str | None = None


class ReasoningItem(_Event):
    type: Literal["reasoning"] = "reasoning"
    text: str
    messageId: str | None = None


class ToolCallItem(_Event):
    """One tool call; the same ``callId`` is emitted again at each status change."""

    type: Literal["tool_call"] = "tool_call"
    callId: str
    name: str
    status: ToolStatus
    detail: ToolDetail
    error: str | None = None


class TodoEntry(_Event):
    text: str
    status: Literal["pending", "in_progress", "completed"] = "pending"


class TodoItem(_Event):
    type: Literal["todo"] = "todo"
    items: list[TodoEntry]


class ErrorItem(_Event):
    type: Literal["error"] = "error"
    message: str


class CompactionItem(_Event):
    type: Literal["compaction"] = "compaction"
    summary: str | None = None


TimelineItem = Annotated[
    UserMessageItem
    | AssistantMessageItem
    | ReasoningItem
    | ToolCallItem
    | TodoItem
    | ErrorItem
    | CompactionItem,
    Field(discriminator="type"),
]

# --------------------------------------------------------------------------- permissions

PermissionKind = Literal["tool", "plan", "question", "mode", "other"]


class PermissionRequest(_Event):
    """Something the agent wants to do that a person must approve."""

    id: str
    kind: PermissionKind = "tool"
    title: str
    description: str | None = None
    toolName: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    detail: ToolDetail | None = None


class AllowResolution(_Event):
    behavior: Literal["allow"] = "allow"
    updatedInput: dict[str, Any] | None = None
    """Replaces the tool input when given (the user edited it)."""


class DenyResolution(_Event):
    behavior: Literal["deny"] = "deny"
    message: str | None = None
    interrupt: bool = False
    """Deny and also stop the turn."""


PermissionResolution = Annotated[AllowResolution | DenyResolution, Field(discriminator="behavior")]

# --------------------------------------------------------------------------- stream events


class Usage(_Event):
    inputTokens: int | None = None
    outputTokens: int | None = None
    cachedInputTokens: int | None = None
    """Input tokens read from the provider's prompt cache."""
    cacheWriteTokens: int | None = None
    """Input tokens written to the provider's prompt cache (added in 2.0, optional)."""
    costUsd: float | None = None
    """What the turn cost, as the provider reported it; ``None`` when it did not."""
    contextWindow: int | None = None


class ThreadStarted(_Event):
    type: Literal["thread_started"] = "thread_started"
    provider: str
    sessionId: str


class TurnStarted(_Event):
    type: Literal["turn_started"] = "turn_started"
    provider: str
    turnId: str | None = None


class TurnCompleted(_Event):
    type: Literal["turn_completed"] = "turn_completed"
    provider: str
    usage: Usage | None = None


class TurnFailed(_Event):
    type: Literal["turn_failed"] = "turn_failed"
    provider: str
    error: str
    code: str | None = None
    diagnostic: str | None = None
    usage: Usage | None = None
    """What the turn spent before it failed, when the provider reported it."""


class TurnCanceled(_Event):
    type: Literal["turn_canceled"] = "turn_canceled"
    provider: str
    reason: str = "interrupted"
    usage: Usage | None = None
    """What the turn spent before it was interrupted, when the provider reported it."""


class UsageReported(_Event):
    """What the running turn has spent so far, reported by a provider during the turn (added
    in 2.0, optional): ``usage`` totals the turn up to now (not a delta), typically after each
    model call. The daemon checks budgets against it and may interrupt the turn; it is not
    recorded (the terminal event's ``usage`` is what is accounted) nor shown to clients.
    Providers that do not report during a turn are checked when it ends."""

    type: Literal["usage_reported"] = "usage_reported"
    provider: str
    usage: Usage


class Timeline(_Event):
    type: Literal["timeline"] = "timeline"
    provider: str
    item: TimelineItem


class PermissionRequested(_Event):
    type: Literal["permission_requested"] = "permission_requested"
    provider: str
    request: PermissionRequest


class PermissionResolved(_Event):
    type: Literal["permission_resolved"] = "permission_resolved"
    provider: str
    requestId: str
    resolution: PermissionResolution


class AttentionRequired(_Event):
    type: Literal["attention_required"] = "attention_required"
    provider: str
    reason: Literal["finished", "error", "permission", "budget"]
    """``budget``: the agent spent its budget (added in 2.0)."""
    timestamp: str
    shouldNotify: bool = True


AgentEvent = Annotated[
    ThreadStarted
    | TurnStarted
    | TurnCompleted
    | TurnFailed
    | TurnCanceled
    | Timeline
    | PermissionRequested
    | PermissionResolved
    | AttentionRequired
    | UsageReported,
    Field(discriminator="type"),
]
"""Any event an agent emits."""

TERMINAL_TURN_EVENTS = frozenset({"turn_completed", "turn_failed", "turn_canceled"})
"""Event types that end a turn."""
