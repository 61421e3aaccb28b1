"""Timeline items, tool-call details and stream events (``AgentStreamEventPayloadSchema``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from paseo_tswire.models.wire import Wire


class ShellDetail(Wire):
    type: Literal["shell"] = "shell"
    command: str
    cwd: str | None = None
    output: str | None = None
    exitCode: int | None = None


class ReadDetail(Wire):
    type: Literal["read"] = "read"
    filePath: str
    content: str | None = None


class EditDetail(Wire):
    type: Literal["edit"] = "edit"
    filePath: str
    oldString: str | None = None
    newString: str | None = None
    unifiedDiff: str | None = None


class WriteDetail(Wire):
    type: Literal["write"] = "write"
    filePath: str
    content: str | None = None


class SearchDetail(Wire):
    type: Literal["search"] = "search"
    query: str
    content: str | None = None


class FetchDetail(Wire):
    type: Literal["fetch"] = "fetch"
    url: str
    result: str | None = None


class SubAgentDetail(Wire):
    type: Literal["sub_agent"] = "sub_agent"
    subAgentType: str | None = None
    description: str | None = None
    log: str


class PlanDetail(Wire):
    type: Literal["plan"] = "plan"
    text: str


class UnknownDetail(Wire):
    """Both values are required keys (``UnknownValueSchema`` accepts ``null``)."""

    type: Literal["unknown"] = "unknown"
    input: Any
    output: Any


class WorktreeSetupCommand(Wire):
    index: int = Field(gt=0)
    command: str
    cwd: str
    log: str
    status: Literal["running", "completed", "failed"]
    exitCode: int | None
    durationMs: int | None = Field(default=None, ge=0)


class WorktreeSetupDetail(Wire):
    """``WorktreeSetupDetailPayloadSchema``: a worktree's setup (the timeline's
    ``paseo_worktree_setup`` call, the setup panel's snapshot)."""

    type: Literal["worktree_setup"] = "worktree_setup"
    worktreePath: str
    branchName: str
    log: str
    commands: list[WorktreeSetupCommand]
    truncated: bool | None = None


ToolDetail = Annotated[
    WorktreeSetupDetail
    | ShellDetail
    | ReadDetail
    | EditDetail
    | WriteDetail
    | SearchDetail
    | FetchDetail
    | SubAgentDetail
    | PlanDetail
    | UnknownDetail,
    Field(discriminator="type"),
]


class UserMessageItem(Wire):
    type: Literal["user_message"] = "user_message"
    text: str
    messageId: str | None = None


class AssistantMessageItem(Wire):
    type: Literal["assistant_message"] = "assistant_message"
    text: str


class ReasoningItem(Wire):
    type: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallItem(Wire):
    """``.strict()`` on the client: exactly these keys; ``error`` is ``null`` unless failed."""

    type: Literal["tool_call"] = "tool_call"
    callId: str
    name: str
    detail: ToolDetail
    status: Literal["running", "completed", "failed", "canceled"]
    error: Any
    metadata: dict[str, Any] | None = None


class TodoEntry(Wire):
    text: str
    completed: bool


class TodoItem(Wire):
    type: Literal["todo"] = "todo"
    items: list[TodoEntry]


class ErrorItem(Wire):
    type: Literal["error"] = "error"
    message: str


class CompactionItem(Wire):
    type: Literal["compaction"] = "compaction"
    status: Literal["loading", "completed"]


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


class Usage(Wire):
    inputTokens: float | None = None
    cachedInputTokens: float | None = None
    outputTokens: float | None = None
    totalCostUsd: float | None = None
    contextWindowMaxTokens: float | None = None


class PermissionAction(Wire):
    id: str
    label: str
    behavior: Literal["allow", "deny"]


class PermissionRequest(Wire):
    id: str
    provider: str
    name: str
    kind: Literal["tool", "plan", "question", "mode", "other"]
    title: str | None = None
    description: str | None = None
    input: dict[str, Any] | None = None
    detail: ToolDetail | None = None
    actions: list[PermissionAction] | None = None


class AllowResolution(Wire):
    behavior: Literal["allow"] = "allow"
    selectedActionId: str | None = None
    updatedInput: dict[str, Any] | None = None


class DenyResolution(Wire):
    behavior: Literal["deny"] = "deny"
    selectedActionId: str | None = None
    message: str | None = None
    interrupt: bool | None = None


Resolution = Annotated[AllowResolution | DenyResolution, Field(discriminator="behavior")]


class ThreadStarted(Wire):
    type: Literal["thread_started"] = "thread_started"
    sessionId: str
    provider: str


class TurnStarted(Wire):
    type: Literal["turn_started"] = "turn_started"
    provider: str


class TurnCompleted(Wire):
    type: Literal["turn_completed"] = "turn_completed"
    provider: str
    usage: Usage | None = None


class TurnFailed(Wire):
    type: Literal["turn_failed"] = "turn_failed"
    provider: str
    error: str
    code: str | None = None
    diagnostic: str | None = None


class TurnCanceled(Wire):
    type: Literal["turn_canceled"] = "turn_canceled"
    provider: str
    reason: str


class TimelineEvent(Wire):
    type: Literal["timeline"] = "timeline"
    provider: str
    item: TimelineItem


class PermissionRequested(Wire):
    type: Literal["permission_requested"] = "permission_requested"
    provider: str
    request: PermissionRequest


class PermissionResolved(Wire):
    type: Literal["permission_resolved"] = "permission_resolved"
    provider: str
    requestId: str
    resolution: Resolution


class AttentionRequired(Wire):
    type: Literal["attention_required"] = "attention_required"
    provider: str
    reason: Literal["finished", "error", "permission"]
    timestamp: str
    shouldNotify: bool


StreamEvent = Annotated[
    ThreadStarted
    | TurnStarted
    | TurnCompleted
    | TurnFailed
    | TurnCanceled
    | TimelineEvent
    | PermissionRequested
    | PermissionResolved
    | AttentionRequired,
    Field(discriminator="type"),
]


class SeqRange(Wire):
    startSeq: int = Field(ge=0)
    endSeq: int = Field(ge=0)


class TimelineEntry(Wire):
    """One row of a ``fetch_agent_timeline_response`` (canonical or projected)."""

    provider: str
    item: TimelineItem
    timestamp: str
    seqStart: int = Field(ge=0)
    seqEnd: int = Field(ge=0)
    sourceSeqRanges: list[SeqRange]
    collapsed: list[Literal["assistant_merge", "reasoning_merge", "tool_lifecycle"]]


class Cursor(Wire):
    epoch: str
    seq: int = Field(ge=0)
