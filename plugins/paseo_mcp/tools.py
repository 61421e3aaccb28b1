"""The tool catalog: each tool's input model and what it drives.

Names and shapes follow the TypeScript Paseo's agent-facing tools. Every tool drives the
daemon through the contract's ports (:mod:`paseo_hookspecs.agents` and the narrow ports of
schedules, worktrees, terminals, providers and voice), with the caller rules
(:mod:`paseo_mcp.rules`) applied; their errors carry the stable codes. Answers have the shapes
of the matching wire methods' results (docs/protocol.md). The models here are what an agent is
shown.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from paseo_mcp import handlers, owned, voice
from paseo_mcp.caller import McpCaller
from paseo_mcp.handlers import Tooling
from paseo_mcp.inputs import (
    ActivityInput,
    AgentRef,
    ArchiveWorktreeInput,
    CaptureTerminalInput,
    CreateAgentInput,
    CreateScheduleInput,
    CreateTerminalInput,
    CreateWorktreeInput,
    ListAgentsInput,
    ListModelsInput,
    ListSchedulesInput,
    ListTerminalsInput,
    ListWorktreesInput,
    NoInput,
    PendingPermissionsInput,
    RespondPermissionInput,
    ScheduleRef,
    SendPromptInput,
    SendTerminalKeysInput,
    SetModeInput,
    TerminalRef,
    UpdateAgentInput,
    WaitInput,
)

Run = Callable[[Tooling, McpCaller, Any], Awaitable[Any]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input: type[BaseModel]
    run: Run


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "create_agent",
        "Start a sub-agent in your workspace; it is labelled with your id as its parent.",
        CreateAgentInput,
        handlers.create_agent,
    ),
    ToolSpec(
        "wait_for_agent",
        "Wait (at most 30 s per call) for an agent's turn to end; returns its last reply.",
        WaitInput,
        handlers.wait_for_agent,
    ),
    ToolSpec("send_agent_prompt", "Send an agent a prompt.", SendPromptInput, handlers.send_prompt),
    ToolSpec("get_agent_status", "An agent's record and state.", AgentRef, handlers.agent_status),
    ToolSpec(
        "list_agents",
        "The agents you can reach: yourself and those you created (or more, as the user's "
        "callerScope setting allows).",
        ListAgentsInput,
        handlers.list_agents,
    ),
    ToolSpec(
        "get_agent_activity",
        "An agent's newest timeline entries.",
        ActivityInput,
        handlers.activity,
    ),
    ToolSpec("cancel_agent", "Interrupt an agent's running turn.", AgentRef, handlers.cancel_agent),
    ToolSpec("archive_agent", "Archive an agent.", AgentRef, handlers.archive_agent),
    ToolSpec(
        "kill_agent", "Stop an agent's process (it can be resumed).", AgentRef, handlers.kill_agent
    ),
    ToolSpec(
        "update_agent",
        "Rename an agent or change its labels.",
        UpdateAgentInput,
        handlers.update_agent,
    ),
    ToolSpec("set_agent_mode", "Switch an agent's mode.", SetModeInput, handlers.set_mode),
    ToolSpec(
        "list_pending_permissions",
        "Permission requests waiting for an answer.",
        PendingPermissionsInput,
        handlers.pending_permissions,
    ),
    ToolSpec(
        "respond_to_permission",
        "Allow or deny a pending permission request.",
        RespondPermissionInput,
        handlers.respond_permission,
    ),
    ToolSpec("create_schedule", "Schedule a prompt.", CreateScheduleInput, owned.create_schedule),
    ToolSpec(
        "list_schedules",
        "The schedules you can reach: yours and those of the agents you reach.",
        ListSchedulesInput,
        owned.list_schedules,
    ),
    ToolSpec("inspect_schedule", "One schedule.", ScheduleRef, owned.inspect_schedule),
    ToolSpec("pause_schedule", "Stop a schedule firing.", ScheduleRef, owned.pause_schedule),
    ToolSpec(
        "resume_schedule", "Fire a paused schedule again.", ScheduleRef, owned.resume_schedule
    ),
    ToolSpec(
        "delete_schedule",
        "Delete a schedule and its history.",
        ScheduleRef,
        owned.delete_schedule,
    ),
    ToolSpec("list_worktrees", "Paseo's worktrees.", ListWorktreesInput, owned.list_worktrees),
    ToolSpec(
        "create_worktree",
        "Create a worktree: branch off, check out a branch, or check out a pull request.",
        CreateWorktreeInput,
        owned.create_worktree,
    ),
    ToolSpec(
        "archive_worktree", "Archive a worktree.", ArchiveWorktreeInput, owned.archive_worktree
    ),
    ToolSpec(
        "list_terminals",
        "The terminals of your workspace, and the profiles a new one can start from.",
        ListTerminalsInput,
        handlers.list_terminals,
    ),
    ToolSpec(
        "create_terminal",
        "Start a terminal (a shell, or a profile's program) in your workspace.",
        CreateTerminalInput,
        handlers.create_terminal,
    ),
    ToolSpec("kill_terminal", "End a terminal's program.", TerminalRef, handlers.kill_terminal),
    ToolSpec(
        "capture_terminal",
        "A terminal's screen and scrollback as plain text.",
        CaptureTerminalInput,
        handlers.capture_terminal,
    ),
    ToolSpec(
        "send_terminal_keys",
        "Type into a terminal: key names or text (add Enter to run a command).",
        SendTerminalKeysInput,
        handlers.send_terminal_keys,
    ),
    ToolSpec(
        "list_providers",
        "The agent providers and their availability.",
        NoInput,
        handlers.list_providers,
    ),
    ToolSpec(
        "list_models",
        "A provider's models and modes.",
        ListModelsInput,
        handlers.list_models,
    ),
    # Voice mode only (filtered out otherwise: paseo_mcp.caller.VOICE_TOOL).
    ToolSpec("speak", voice.DESCRIPTION, voice.SpeakInput, voice.speak),
)

BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}


def input_schema(tool: ToolSpec) -> dict[str, Any]:
    """The JSON schema an agent is shown for ``tool``'s input."""
    return tool.input.model_json_schema()
