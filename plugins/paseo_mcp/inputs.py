"""The tools' input models: what an agent is shown (docs/mcp.md lists their schemas)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

WAIT_LIMIT = 30.0
"""Seconds one ``wait_for_agent`` call (or a foreground ``create_agent``) waits at most: an
agent's tool call must come back while its own turn is still alive; call again to keep
waiting."""


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class AgentRef(ToolInput):
    agentId: str = Field(min_length=1, description="the agent's id")


class CreateAgentInput(ToolInput):
    provider: str = Field(
        min_length=1, description="provider id, or `provider/model` (see list_providers)"
    )
    model: str | None = Field(default=None, description="model id (see list_models)")
    initialPrompt: str | None = Field(default=None, description="the first prompt to run")
    title: str | None = Field(default=None, max_length=300)
    background: bool = Field(
        default=False,
        description="return at once; otherwise wait (at most 30 s) for the first turn to end",
    )
    notifyOnFinish: bool = Field(
        default=False,
        description="get a <paseo-system> prompt when the child finishes, errors or needs a "
        "permission",
    )
    thinking: str | None = Field(default=None, description="thinking option id")
    labels: dict[str, str] = Field(default_factory=dict)


class WaitInput(AgentRef):
    timeout: float = Field(default=WAIT_LIMIT, ge=0, le=WAIT_LIMIT, description="seconds")


class SendPromptInput(AgentRef):
    prompt: str = Field(min_length=1)


class ListAgentsInput(ToolInput):
    includeArchived: bool = False
    labels: dict[str, str] = Field(default_factory=dict)


class ActivityInput(AgentRef):
    limit: int = Field(default=50, ge=1, le=500, description="newest timeline entries")


class UpdateAgentInput(AgentRef):
    title: str | None = Field(default=None, max_length=300)
    labels: dict[str, str | None] = Field(
        default_factory=dict, description="set labels; a null value removes one"
    )


class SetModeInput(AgentRef):
    modeId: str = Field(min_length=1)


class PendingPermissionsInput(ToolInput):
    agentId: str | None = Field(default=None, description="only this agent's")


class RespondPermissionInput(AgentRef):
    requestId: str = Field(min_length=1)
    behavior: Literal["allow", "deny"]
    message: str | None = Field(default=None, description="deny: why")


class CreateScheduleInput(ToolInput):
    prompt: str = Field(min_length=1)
    name: str | None = Field(default=None, max_length=200)
    cadence: dict[str, Any] = Field(
        description='`{"type": "cron", "expression": "0 9 * * 1-5", "timezone": "UTC"}` or '
        '`{"type": "every", "everyMs": 3600000}` (legacy)'
    )
    target: dict[str, Any] = Field(
        description='`{"type": "agent", "agentId": "…"}` or `{"type": "new-agent", '
        '"config": {"provider": "…", "cwd": "…"}}`'
    )
    maxRuns: int | None = Field(default=None, ge=1)
    expiresAt: str | None = Field(default=None, description="ISO 8601")


class ListSchedulesInput(ToolInput):
    status: Literal["active", "paused", "completed"] | None = None


class ScheduleRef(ToolInput):
    scheduleId: str = Field(min_length=1)


class ListWorktreesInput(ToolInput):
    projectId: str | None = None


class CreateWorktreeInput(ToolInput):
    cwd: str | None = Field(default=None, description="a directory in the project (default: yours)")
    mode: Literal["branch-off", "checkout-branch", "checkout-pr"] = "branch-off"
    branch: str | None = None
    base: str | None = Field(default=None, description="branch-off: base ref")
    prNumber: int | None = Field(default=None, gt=0, description="checkout-pr: the PR number")


class ArchiveWorktreeInput(ToolInput):
    workspaceId: str = Field(min_length=1)
    force: bool = False


class ListTerminalsInput(ToolInput):
    pass


class CreateTerminalInput(ToolInput):
    profileId: str | None = Field(
        default=None, description="profile to start (see list_terminals; default: the first)"
    )
    prompt: str | None = Field(default=None, description="text for the profile's prompt slot")
    columns: int = Field(default=120, ge=10, le=500)
    rows: int = Field(default=40, ge=5, le=200)


class TerminalRef(ToolInput):
    terminalId: str = Field(min_length=1, description="the terminal's id")


class CaptureTerminalInput(TerminalRef):
    start: int | None = Field(
        default=None, description="first line (0 the oldest; negative counts from the end)"
    )
    end: int | None = Field(default=None, description="last line, inclusive (-1 the last)")


class SendTerminalKeysInput(TerminalRef):
    keys: list[str] = Field(
        min_length=1,
        description="key names (Enter, Tab, Escape, Up, C-c, M-x, …) or text, sent in order",
    )
    literal: bool = Field(default=False, description="send every entry as text")


class NoInput(ToolInput):
    pass


class ListModelsInput(ToolInput):
    provider: str = Field(min_length=1)
