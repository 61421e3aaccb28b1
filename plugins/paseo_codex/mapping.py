"""Translate Codex app-server items and notifications into Paseo timeline items.

Codex reports a turn as *items* (``userMessage``, ``agentMessage``, ``reasoning``,
``commandExecution``, ``fileChange``, ``mcpToolCall``, …), each announced by ``item/started``,
streamed by delta notifications and finished by ``item/completed``. :class:`ItemMapper` keeps the
little state this needs (text already streamed per item, file changes awaiting approval, tool
calls still running) and returns the timeline items to emit; it never does I/O.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from paseo_hookspecs.events import (
    AssistantMessageItem,
    CompactionItem,
    EditDetail,
    FetchDetail,
    OtherDetail,
    PlanDetail,
    ReadDetail,
    ReasoningItem,
    SearchDetail,
    ShellDetail,
    SubAgentDetail,
    TimelineItem,
    TodoEntry,
    TodoItem,
    ToolCallItem,
    ToolDetail,
    ToolStatus,
    Usage,
    UserMessageItem,
    WriteDetail,
)

OUTPUT_KEEP = 64 * 1024
"""Characters of streamed command output kept per call (when Codex sends no aggregate)."""

_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})

# Codex item statuses → tool-call lifecycle. A command the user declined did not run: "failed"
# with an explanatory error, so it reads as a refused call rather than an interruption.
_STATUS: dict[str, ToolStatus] = {
    "inProgress": "running",
    "completed": "completed",
    "failed": "failed",
    "declined": "failed",
    "interrupted": "canceled",
}


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (Codex fields are often optional)."""
    return value if isinstance(value, dict) else {}


def unwrap_shell(command: str) -> str:
    """The script of ``/bin/bash -lc 'SCRIPT'`` (how Codex runs every command), else as is."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if len(argv) == 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc"):
        return argv[2]
    return command


def user_text(content: Any) -> str:
    """The text parts of a ``userMessage`` item's ``content`` (images are not text)."""
    parts = content if isinstance(content, list) else []
    return "\n".join(
        str(part.get("text", ""))
        for part in parts
        if isinstance(part, dict) and part.get("type") == "text"
    )


def file_change_detail(changes: Any) -> ToolDetail:
    """A ``fileChange`` item's ``changes`` as a write (one added file) or an edit."""
    entries = [c for c in changes if isinstance(c, dict)] if isinstance(changes, list) else []
    if not entries:
        return OtherDetail(input={"changes": changes})
    if len(entries) == 1:
        change = entries[0]
        path, diff = str(change.get("path", "")), change.get("diff")
        kind = change.get("kind")
        kind_type = kind.get("type") if isinstance(kind, dict) else kind
        if kind_type == "add":
            # For an added file Codex's "diff" is the new content itself.
            return WriteDetail(path=path, content=diff if isinstance(diff, str) else None)
        return EditDetail(path=path, diff=diff if isinstance(diff, str) else None, kind=kind_type)
    combined = "\n".join(f"--- {c.get('path')}\n{c.get('diff', '')}" for c in entries)
    return EditDetail(
        path=str(entries[0].get("path", "")),
        diff=combined,
        paths=[str(c.get("path", "")) for c in entries],
    )


def describe_change(detail: ToolDetail) -> str:
    """A permission title for a file change."""
    if isinstance(detail, WriteDetail):
        return f"Write {detail.path}"
    if isinstance(detail, EditDetail):
        paths = getattr(detail, "paths", None)
        if isinstance(paths, list) and len(paths) > 1:
            return f"Edit {len(paths)} files"
        return f"Edit {detail.path}"
    return "Apply file changes"


def _mcp_output(item: dict[str, Any]) -> Any:
    result = item.get("result")
    if isinstance(result, dict):
        content = result.get("content")
        texts = [
            c.get("text") for c in content or [] if isinstance(c, dict) and c.get("type") == "text"
        ]
        if texts and len(texts) == len(content or []):
            return "\n".join(str(t) for t in texts)
        return result
    return None


def _error_text(item: dict[str, Any]) -> str | None:
    error = item.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "failed")
    return str(error) if isinstance(error, str) and error else None


def add_usage(so_far: Usage | None, update: dict[str, Any]) -> Usage:
    """Add one ``thread/tokenUsage/updated`` to a turn's usage.

    Codex sends one update per model request with ``last`` (that request) and ``total`` (the
    thread so far, which after a resume includes earlier processes' turns): a turn's usage is
    the sum of its requests' ``last``.
    """
    last = as_dict(update.get("last"))
    base = so_far or Usage()

    def plus(current: int | None, key: str) -> int | None:
        value = last.get(key)
        if not isinstance(value, int):
            return current
        return (current or 0) + value

    window = update.get("modelContextWindow")
    return Usage(
        inputTokens=plus(base.inputTokens, "inputTokens"),
        outputTokens=plus(base.outputTokens, "outputTokens"),
        cachedInputTokens=plus(base.cachedInputTokens, "cachedInputTokens"),
        contextWindow=window if isinstance(window, int) else base.contextWindow,
    )


def turn_error(error: Any) -> tuple[str, str | None, str | None]:
    """``(message, code, diagnostic)`` of a failed turn's ``TurnError``.

    Codex passes the API's error body through as the message when it cannot classify it (a JSON
    document with ``error.message``); that inner message is what a person needs.
    """
    if not isinstance(error, dict):
        return ("the Codex turn failed", None, None)
    message = str(error.get("message") or "the Codex turn failed")
    try:
        body = json.loads(message)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        inner = body["error"].get("message")
        if isinstance(inner, str) and inner:
            message = inner
    info = error.get("codexErrorInfo")
    code: str | None = None
    status: Any = None
    if isinstance(info, str):
        code = info
    elif isinstance(info, dict) and info:
        code = next(iter(info))
        value = info[code]
        status = value.get("httpStatusCode") if isinstance(value, dict) else None
    if isinstance(status, int) and str(status) not in message:
        message = f"{message} (HTTP {status})"
    details = error.get("additionalDetails")
    return (message, code, details if isinstance(details, str) and details else None)


@dataclass
class ItemMapper:
    """Per-session translation state; one instance per Codex thread."""

    streamed: dict[str, str] = field(default_factory=dict)
    """Text already emitted per agentMessage/reasoning item id."""
    file_changes: dict[str, ToolDetail] = field(default_factory=dict)
    """Details of file-change items by id (their approval requests carry no changes)."""
    commands: dict[str, ShellDetail] = field(default_factory=dict)
    output: dict[str, str] = field(default_factory=dict)
    running: dict[str, ToolCallItem] = field(default_factory=dict)
    """Tool calls announced but not finished, to cancel when the turn ends early."""

    # ------------------------------------------------------------------ deltas

    def text_delta(self, kind: str, item_id: str, delta: str) -> list[TimelineItem]:
        """A chunk of an agent message (``kind="assistant"``) or of reasoning."""
        if not delta:
            return []
        self.streamed[item_id] = self.streamed.get(item_id, "") + delta
        if kind == "assistant":
            return [AssistantMessageItem(text=delta, messageId=item_id)]
        return [ReasoningItem(text=delta, messageId=item_id)]

    def reasoning_break(self, item_id: str) -> list[TimelineItem]:
        """A new reasoning summary part starts: separate it from the previous one."""
        if self.streamed.get(item_id):
            return self.text_delta("reasoning", item_id, "\n\n")
        return []

    def command_output(self, item_id: str, delta: str) -> None:
        """Keep streamed command output (used when the completed item has no aggregate)."""
        self.output[item_id] = (self.output.get(item_id, "") + delta)[-OUTPUT_KEEP:]

    # ------------------------------------------------------------------ items

    def started(self, item: dict[str, Any]) -> list[TimelineItem]:
        """Items for ``item/started``: tool calls begin running; messages wait for deltas."""
        call = self._tool_call(item, "running")
        if call is None:
            return []
        self.running[call.callId] = call
        return [call]

    def completed(self, item: dict[str, Any]) -> list[TimelineItem]:
        """Items for ``item/completed``."""
        kind, item_id = item.get("type"), str(item.get("id", ""))
        if kind == "userMessage":
            text = user_text(item.get("content"))
            client_id = item.get("clientId")
            return [UserMessageItem(text=text, messageId=client_id or item_id)]
        if kind == "agentMessage":
            return self._rest(item_id, str(item.get("text") or ""), "assistant")
        if kind == "reasoning":
            parts = [*(item.get("summary") or []), *(item.get("content") or [])]
            return self._rest(item_id, "\n\n".join(str(p) for p in parts), "reasoning")
        if kind == "contextCompaction":
            return [CompactionItem()]
        call = self._tool_call(item, None)
        if call is None:
            return []
        self.running.pop(call.callId, None)
        self.file_changes.pop(call.callId, None)
        self.commands.pop(call.callId, None)
        self.output.pop(call.callId, None)
        return [call]

    def _rest(self, item_id: str, text: str, kind: str) -> list[TimelineItem]:
        # Emit what the deltas did not carry (all of it when nothing was streamed).
        streamed = self.streamed.pop(item_id, "")
        rest = text[len(streamed) :] if text.startswith(streamed) else ("" if streamed else text)
        if not rest:
            return []
        if kind == "assistant":
            return [AssistantMessageItem(text=rest, messageId=item_id)]
        return [ReasoningItem(text=rest, messageId=item_id)]

    def finish_running(self, status: ToolStatus, error: str | None) -> list[TimelineItem]:
        """End every tool call still running (the turn was interrupted or failed)."""
        items: list[TimelineItem] = [
            call.model_copy(update={"status": status, "error": error})
            for call in self.running.values()
        ]
        self.running.clear()
        self.streamed.clear()
        return items

    def plan(self, params: dict[str, Any]) -> list[TimelineItem]:
        """``turn/plan/updated`` → a todo list."""
        states: dict[Any, Literal["pending", "in_progress", "completed"]] = {
            "pending": "pending",
            "inProgress": "in_progress",
            "completed": "completed",
        }
        entries = [
            TodoEntry(
                text=str(step.get("step", "")), status=states.get(step.get("status"), "pending")
            )
            for step in params.get("plan") or []
            if isinstance(step, dict)
        ]
        return [TodoItem(items=entries)] if entries else []

    # ------------------------------------------------------------------ tool calls

    def _tool_call(self, item: dict[str, Any], status: ToolStatus | None) -> ToolCallItem | None:
        kind, item_id = item.get("type"), str(item.get("id", ""))
        raw_status = item.get("status")
        if status is None:
            status = _STATUS.get(str(raw_status), "completed")
        error: str | None = None
        name: str
        detail: ToolDetail
        if kind == "commandExecution":
            name = "shell"
            output = item.get("aggregatedOutput")
            if output is None and item_id in self.output:
                output = self.output[item_id]
            exit_code = item.get("exitCode")
            detail = ShellDetail(
                command=unwrap_shell(str(item.get("command", ""))),
                cwd=item.get("cwd"),
                output=output if isinstance(output, str) else None,
                exitCode=exit_code if isinstance(exit_code, int) else None,
            )
            self.commands[item_id] = detail
            if raw_status == "declined":
                error = "declined by the user"
            elif raw_status == "failed":
                error = f"exit code {exit_code}" if isinstance(exit_code, int) else "failed"
        elif kind == "fileChange":
            name = "apply_patch"
            detail = file_change_detail(item.get("changes"))
            self.file_changes[item_id] = detail
            if raw_status == "declined":
                error = "declined by the user"
            elif raw_status == "failed":
                error = "the patch could not be applied"
        elif kind == "mcpToolCall":
            name = f"mcp:{item.get('server')}/{item.get('tool')}"
            detail = OtherDetail(input=item.get("arguments"), output=_mcp_output(item))
            error = _error_text(item)
        elif kind == "dynamicToolCall":
            name = str(item.get("tool", "tool"))
            detail = OtherDetail(input=item.get("arguments"), output=item.get("contentItems"))
            if raw_status == "failed":
                error = "failed"
        elif kind == "webSearch":
            name = "web_search"
            action = as_dict(item.get("action"))
            if action.get("type") == "openPage" and action.get("url"):
                detail = FetchDetail(url=str(action["url"]))
            else:
                detail = SearchDetail(query=str(item.get("query", "")))
        elif kind == "imageView":
            name = "view_image"
            detail = ReadDetail(path=str(item.get("path", "")))
        elif kind == "collabAgentToolCall":
            name = str(item.get("tool", "sub_agent"))
            detail = SubAgentDetail(
                description=str(item.get("prompt") or item.get("tool") or "sub-agent"),
                agentType=item.get("model") if isinstance(item.get("model"), str) else None,
            )
        elif kind == "plan":
            if status == "running":
                return None
            name = "plan"
            detail = PlanDetail(text=str(item.get("text", "")))
        else:
            return None
        if status == "running":
            error = None
        return ToolCallItem(callId=item_id, name=name, status=status, detail=detail, error=error)
