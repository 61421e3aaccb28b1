"""The tool catalog: each tool's input model and how it maps onto the daemon's methods.

Names and shapes follow the TypeScript Paseo's agent-facing tools. Every tool runs through
:meth:`paseo_hookspecs.mcp_host.McpHost.call`, so it gets the wire protocol's validation, its
stable error codes and the caller rules; the models here are what an agent is shown.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from paseo_hookspecs.mcp_host import NOTIFY_LABEL, McpCaller, McpHost
from paseo_hookspecs.terminals import encode_keys
from pydantic import BaseModel, ConfigDict, Field

from paseo_mcp import voice

WAIT_LIMIT = 30.0
"""Seconds one ``wait_for_agent`` call (or a foreground ``create_agent``) waits at most: an
agent's tool call must come back while its own turn is still alive; call again to keep
waiting."""


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


Run = Callable[[McpHost, McpCaller, Any], Awaitable[Any]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input: type[BaseModel]
    run: Run


def _fields(args: ToolInput) -> dict[str, Any]:
    # Top-level absent fields only: a null label value inside `labels` means "remove".
    return {key: value for key, value in args.model_dump().items() if value is not None}


def _rpc(method: str, shape: Callable[[Any, McpCaller], dict[str, Any]] | None = None) -> Run:
    async def run(host: McpHost, caller: McpCaller, args: ToolInput) -> Any:
        params = shape(args, caller) if shape else _fields(args)
        return await host.call(caller, method, params)

    return run


async def _create_agent(host: McpHost, caller: McpCaller, args: CreateAgentInput) -> Any:
    labels = dict(args.labels)
    if args.notifyOnFinish:
        labels[NOTIFY_LABEL] = "true"
    params: dict[str, Any] = {"provider": args.provider, "labels": labels}
    for key, value in (
        ("model", args.model),
        ("title", args.title),
        ("thinkingOptionId", args.thinking),
        ("initialPrompt", args.initialPrompt),
    ):
        if value is not None:
            params[key] = value
    created = await host.call(caller, "agent.create", params)
    if args.background or not args.initialPrompt:
        return created
    agent_id = created["agent"]["id"]
    waited = await host.call(caller, "agent.wait", {"agentId": agent_id, "timeout": WAIT_LIMIT})
    # The outcome first: what a model reads of a long result is its beginning.
    return {"agentId": agent_id, "wait": waited, "agent": created["agent"]}


async def _activity(host: McpHost, caller: McpCaller, args: ActivityInput) -> Any:
    return await host.call(
        caller, "agent.timeline", {"agentId": args.agentId, "limit": args.limit, "tail": True}
    )


def _worktree(args: CreateWorktreeInput, caller: McpCaller) -> dict[str, Any]:
    params: dict[str, Any] = {
        "cwd": args.cwd or caller.cwd,
        "mode": "change-request" if args.mode == "checkout-pr" else args.mode,
    }
    for key, value in (("branch", args.branch), ("base", args.base)):
        if value is not None:
            params[key] = value
    if args.prNumber is not None:
        params["changeRequest"] = args.prNumber
    return params


def _keys(args: SendTerminalKeysInput, caller: McpCaller) -> dict[str, Any]:
    return {"terminalId": args.terminalId, "data": encode_keys(args.keys, literal=args.literal)}


def _send(args: SendPromptInput, caller: McpCaller) -> dict[str, Any]:
    return {"agentId": args.agentId, "text": args.prompt}


def _models(args: ListModelsInput, caller: McpCaller) -> dict[str, Any]:
    return {"providerId": args.provider}


def _respond(args: RespondPermissionInput, caller: McpCaller) -> dict[str, Any]:
    return _fields(args)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "create_agent",
        "Start a sub-agent in your workspace; it is labelled with your id as its parent.",
        CreateAgentInput,
        _create_agent,
    ),
    ToolSpec(
        "wait_for_agent",
        "Wait (at most 30 s per call) for an agent's turn to end; returns its last reply.",
        WaitInput,
        _rpc("agent.wait"),
    ),
    ToolSpec(
        "send_agent_prompt", "Send an agent a prompt.", SendPromptInput, _rpc("agent.send", _send)
    ),
    ToolSpec("get_agent_status", "An agent's record and state.", AgentRef, _rpc("agent.get")),
    ToolSpec(
        "list_agents",
        "The agents you can reach: yourself and those you created (or more, as the user's "
        "daemon.mcp.callerScope allows).",
        ListAgentsInput,
        _rpc("agent.list"),
    ),
    ToolSpec(
        "get_agent_activity",
        "An agent's newest timeline entries.",
        ActivityInput,
        _activity,
    ),
    ToolSpec(
        "cancel_agent", "Interrupt an agent's running turn.", AgentRef, _rpc("agent.interrupt")
    ),
    ToolSpec("archive_agent", "Archive an agent.", AgentRef, _rpc("agent.archive")),
    ToolSpec(
        "kill_agent", "Stop an agent's process (it can be resumed).", AgentRef, _rpc("agent.stop")
    ),
    ToolSpec(
        "update_agent",
        "Rename an agent or change its labels.",
        UpdateAgentInput,
        _rpc("agent.update"),
    ),
    ToolSpec("set_agent_mode", "Switch an agent's mode.", SetModeInput, _rpc("agent.mode.set")),
    ToolSpec(
        "list_pending_permissions",
        "Permission requests waiting for an answer.",
        PendingPermissionsInput,
        _rpc("agent.permissions.list"),
    ),
    ToolSpec(
        "respond_to_permission",
        "Allow or deny a pending permission request.",
        RespondPermissionInput,
        _rpc("agent.permissions.respond", _respond),
    ),
    ToolSpec("create_schedule", "Schedule a prompt.", CreateScheduleInput, _rpc("schedule.create")),
    ToolSpec("list_schedules", "Every schedule.", ListSchedulesInput, _rpc("schedule.list")),
    ToolSpec("inspect_schedule", "One schedule.", ScheduleRef, _rpc("schedule.inspect")),
    ToolSpec("pause_schedule", "Stop a schedule firing.", ScheduleRef, _rpc("schedule.pause")),
    ToolSpec(
        "resume_schedule", "Fire a paused schedule again.", ScheduleRef, _rpc("schedule.resume")
    ),
    ToolSpec(
        "delete_schedule",
        "Delete a schedule and its history.",
        ScheduleRef,
        _rpc("schedule.delete"),
    ),
    ToolSpec("list_worktrees", "Paseo's worktrees.", ListWorktreesInput, _rpc("worktree.list")),
    ToolSpec(
        "create_worktree",
        "Create a worktree: branch off, check out a branch, or check out a pull request.",
        CreateWorktreeInput,
        _rpc("worktree.create", _worktree),
    ),
    ToolSpec(
        "archive_worktree", "Archive a worktree.", ArchiveWorktreeInput, _rpc("worktree.archive")
    ),
    ToolSpec(
        "list_terminals",
        "The terminals of your workspace, and the profiles a new one can start from.",
        ListTerminalsInput,
        _rpc("terminal.list"),
    ),
    ToolSpec(
        "create_terminal",
        "Start a terminal (a shell, or a profile's program) in your workspace.",
        CreateTerminalInput,
        _rpc("terminal.create"),
    ),
    ToolSpec(
        "kill_terminal", "End a terminal's program.", TerminalRef, _rpc("terminal.kill")
    ),
    ToolSpec(
        "capture_terminal",
        "A terminal's screen and scrollback as plain text.",
        CaptureTerminalInput,
        _rpc("terminal.capture"),
    ),
    ToolSpec(
        "send_terminal_keys",
        "Type into a terminal: key names or text (add Enter to run a command).",
        SendTerminalKeysInput,
        _rpc("terminal.input", _keys),
    ),
    ToolSpec(
        "list_providers",
        "The agent providers and their availability.",
        NoInput,
        _rpc("provider.list"),
    ),
    ToolSpec(
        "list_models",
        "A provider's models and modes.",
        ListModelsInput,
        _rpc("provider.models", _models),
    ),
    # Voice mode only (the kernel filters it out otherwise): plugins/paseo_mcp/voice.py.
    ToolSpec("speak", voice.DESCRIPTION, voice.SpeakInput, voice.speak),
)

BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}


def input_schema(tool: ToolSpec) -> dict[str, Any]:
    """The JSON schema an agent is shown for ``tool``'s input."""
    return tool.input.model_json_schema()
