"""Pure translations from Claude Code's stream-json vocabulary to Paseo's events.

Nothing here does I/O: the session feeds these functions the objects Claude Code printed and
emits what they return, which keeps the mapping testable on recorded shapes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.events import (
    AnyToolDetail,
    EditDetail,
    FetchDetail,
    OtherDetail,
    PermissionKind,
    PermissionRequest,
    PlanDetail,
    ReadDetail,
    SearchDetail,
    ShellDetail,
    SubAgentDetail,
    TodoEntry,
    TodoItem,
    Usage,
    WriteDetail,
)
from paseo_hookspecs.interfaces.agent import SlashCommand
from pydantic import TypeAdapter, ValidationError

TITLE_LIMIT = 120
"""Longest input summary put in a permission title."""

OUTPUT_LIMIT = 20_000
"""Longest tool output kept in a tool-call detail (the transcript keeps the whole of it)."""


_TODO_ENTRIES = TypeAdapter(list[TodoEntry])


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _clip(text: str | None, limit: int = OUTPUT_LIMIT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


def tool_result_text(content: Any) -> str:
    """The text of a ``tool_result`` block's ``content`` (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "image":
                    parts.append("[image]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def tool_detail(
    name: str,
    tool_input: Mapping[str, Any],
    *,
    output: str | None = None,
    cwd: str | None = None,
    structured: Any = None,
) -> AnyToolDetail:
    """The typed detail of a tool call, from Claude Code's tool name and input.

    ``output`` is the tool result's text once known; ``structured`` is Claude Code's
    ``tool_use_result`` (it carries the shell's exit facts, which the text does not).
    """
    get = tool_input.get
    output = _clip(output)
    if name == "Bash":
        exit_code = None
        if isinstance(structured, Mapping):
            code = structured.get("exitCode", structured.get("returnCode"))
            exit_code = code if isinstance(code, int) else None
        return ShellDetail(
            command=_text(get("command")) or "", cwd=cwd, output=output, exitCode=exit_code
        )
    if name == "Read":
        return ReadDetail(path=_text(get("file_path")) or "", content=output)
    if name == "Edit":
        return EditDetail(
            path=_text(get("file_path")) or "",
            oldText=_text(get("old_string")),
            newText=_text(get("new_string")),
        )
    if name == "MultiEdit":
        edits = [e for e in get("edits") or [] if isinstance(e, Mapping)]
        return EditDetail(
            path=_text(get("file_path")) or "",
            oldText="\n".join(_text(e.get("old_string")) or "" for e in edits) or None,
            newText="\n".join(_text(e.get("new_string")) or "" for e in edits) or None,
        )
    if name == "Write":
        return WriteDetail(path=_text(get("file_path")) or "", content=_text(get("content")))
    if name in ("Grep", "Glob"):
        return SearchDetail(
            query=_text(get("pattern")) or "", path=_text(get("path")), results=output
        )
    if name == "WebSearch":
        return SearchDetail(query=_text(get("query")) or "", results=output)
    if name == "WebFetch":
        return FetchDetail(url=_text(get("url")) or "", result=output)
    if name in ("Task", "Agent"):
        return SubAgentDetail(
            description=_text(get("description")) or _text(get("prompt")) or "",
            agentType=_text(get("subagent_type")),
            result=output,
        )
    if name == "ExitPlanMode":
        return PlanDetail(text=_text(get("plan")) or "")
    return OtherDetail(input=dict(tool_input), output=output)


def input_summary(name: str, tool_input: Mapping[str, Any]) -> str:
    """A one-line summary of what a tool call is about (its command, path, pattern, …)."""
    get = tool_input.get
    for key in ("command", "file_path", "notebook_path", "pattern", "url", "query", "description"):
        value = _text(get(key))
        if value:
            summary = " ".join(value.split())
            return summary if len(summary) <= TITLE_LIMIT else summary[: TITLE_LIMIT - 1] + "…"
    return ""


def _question_title(tool_input: Mapping[str, Any]) -> str:
    questions = tool_input.get("questions")
    if isinstance(questions, list) and questions and isinstance(questions[0], Mapping):
        text = _text(questions[0].get("question"))
        if text:
            return text
    return "Claude has a question"


def permission_request(request_id: str, request: Mapping[str, Any]) -> PermissionRequest:
    """A ``permission_requested`` payload from a ``can_use_tool`` control request."""
    name = _text(request.get("tool_name")) or "tool"
    raw_input = request.get("input")
    tool_input: dict[str, Any] = dict(raw_input) if isinstance(raw_input, Mapping) else {}
    display = _text(request.get("display_name")) or name
    kind: PermissionKind = "tool"
    if name == "ExitPlanMode":
        kind, title = "plan", "Plan ready: approve to start implementing"
    elif name == "AskUserQuestion":
        kind, title = "question", _question_title(tool_input)
    else:
        summary = input_summary(name, tool_input)
        title = f"{display}: {summary}" if summary else display
    description = _text(request.get("decision_reason")) or _text(request.get("description"))
    extra: dict[str, Any] = {}
    for key in ("tool_use_id", "permission_suggestions", "blocked_path"):
        if request.get(key) is not None:
            extra[key] = request[key]
    return PermissionRequest(
        id=request_id,
        kind=kind,
        title=title,
        description=description,
        toolName=name,
        input=tool_input,
        detail=tool_detail(name, tool_input),
        **extra,
    )


def todo_item(tool_input: Mapping[str, Any]) -> TodoItem | None:
    """A todo timeline item from a ``TodoWrite`` call, when its list is well-formed."""
    todos = tool_input.get("todos")
    if not isinstance(todos, list):
        return None
    entries = [
        {"text": t.get("content") or t.get("activeForm") or "", "status": t.get("status")}
        for t in todos
        if isinstance(t, Mapping)
    ]
    try:
        return TodoItem(items=_TODO_ENTRIES.validate_python(entries))
    except ValidationError:
        return None


def message_tokens(message: Mapping[str, Any]) -> Usage | None:
    """The tokens of one model call, from an ``assistant`` message's ``message.usage``
    (Claude Code repeats it on each content block of the call); ``None`` without one."""
    inner = message.get("message")
    raw = inner.get("usage") if isinstance(inner, Mapping) else None
    if not isinstance(raw, Mapping):
        return None

    def count(key: str) -> int | None:
        value = raw.get(key)
        return value if isinstance(value, int) else None

    return Usage(
        inputTokens=count("input_tokens"),
        outputTokens=count("output_tokens"),
        cachedInputTokens=count("cache_read_input_tokens"),
        cacheWriteTokens=count("cache_creation_input_tokens"),
    )


def usage_from_result(result: Mapping[str, Any]) -> Usage:
    """Token counts and cost of one ``result`` message."""
    raw = result.get("usage")
    usage = raw if isinstance(raw, Mapping) else {}

    def count(key: str) -> int | None:
        value = usage.get(key)
        return value if isinstance(value, int) else None

    cached = count("cache_read_input_tokens")
    cost = result.get("total_cost_usd")
    context_window = None
    models = result.get("modelUsage")
    if isinstance(models, Mapping):
        windows: list[int] = [
            m["contextWindow"]
            for m in models.values()
            if isinstance(m, Mapping) and isinstance(m.get("contextWindow"), int)
        ]
        context_window = max(windows) if windows else None
    return Usage(
        inputTokens=count("input_tokens"),
        outputTokens=count("output_tokens"),
        cachedInputTokens=cached,
        cacheWriteTokens=count("cache_creation_input_tokens"),
        costUsd=float(cost) if isinstance(cost, int | float) else None,
        contextWindow=context_window,
    )


_STATUS_ADVICE = {
    400: "the model API rejected the request; check the model name and the agent's settings",
    401: "the API key was refused; set a valid ANTHROPIC_API_KEY (or log in with `claude`)",
    403: "the API key lacks access; check the account's permissions for this model",
    404: "the model was not found; pick another model (`paseo provider models claude`)",
    413: "the request was too large; start a new agent or compact the conversation",
    429: "the API is rate limiting this account; wait a moment and send the prompt again",
    529: "the API is overloaded; wait a moment and send the prompt again",
}


def failure_message(result: Mapping[str, Any], retries: list[Mapping[str, Any]]) -> str:
    """What went wrong in a failed ``result`` and what to do, in one message."""
    status = result.get("api_error_status")
    text = _text(result.get("result"))
    errors = result.get("errors")
    if not text and isinstance(errors, list):
        text = "; ".join(str(e) for e in errors if e) or None
    subtype = _text(result.get("subtype")) or "error"
    if isinstance(status, int):
        advice = _STATUS_ADVICE.get(status) or (
            "the model API failed on its side; send the prompt again in a moment"
            if status >= 500
            else "check the model and the agent's settings"
        )
        what = text or f"the model API answered HTTP {status}"
        message = f"{what} (HTTP {status}); {advice}"
    else:
        reason = _text(result.get("terminal_reason")) or subtype
        message = f"Claude Code ended the turn with an error ({reason})"
        if text:
            message += f": {text}"
        message += "; send the prompt again, or see the agent's diagnostics"
    if retries:
        message += f" [after {len(retries)} retr{'y' if len(retries) == 1 else 'ies'}]"
    return message


def failure_code(result: Mapping[str, Any]) -> str:
    """A short stable code for a failed turn (``http_500``, ``error_max_turns``, …)."""
    status = result.get("api_error_status")
    if isinstance(status, int):
        return f"http_{status}"
    subtype = _text(result.get("subtype"))
    if subtype and subtype != "success":
        return subtype
    return _text(result.get("terminal_reason")) or "error"


def startup_failure(provider: str, refused: str | None, exit_code: int | None, stderr: str) -> str:
    """Why Claude Code did not start a session (``refused``: its control error, else it
    exited with ``exit_code``), with its error output and what to do about it."""
    if refused is not None:
        what = f"Claude Code refused to start the session: {refused}"
    else:
        what = f"Claude Code exited during start-up (exit code {exit_code})"
    message = f"{what}: {stderr.strip() or '(no stderr)'}"
    if "root" in stderr and "dangerously" in stderr:
        return message + (
            "; as root Claude Code allows bypassPermissions only with IS_SANDBOX=1 in the "
            f"agent's environment (agents.providers.{provider}.env), or pick another mode"
        )
    if "No conversation found" in stderr:
        return message + (
            "; the conversation's transcript is gone (it lives under ~/.claude/projects for "
            "the agent's cwd); start a new agent"
        )
    return message + "; check the agent's settings and that `claude --version` runs"


def slash_commands(answer: Mapping[str, Any]) -> list[SlashCommand]:
    """The commands in Claude Code's ``initialize`` answer (``response.commands``: name,
    description, argumentHint — built-in commands, skills and the user's own ``.claude``
    commands), in its order; malformed entries are skipped."""
    body = answer.get("response")
    listed = body.get("commands") if isinstance(body, Mapping) else None
    commands: list[SlashCommand] = []
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, Mapping):
            command = SlashCommand.listed(
                entry.get("name"), entry.get("description"), entry.get("argumentHint")
            )
            if command is not None:
                commands.append(command)
    return commands
