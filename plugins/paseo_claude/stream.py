"""Claude Code's stream messages as timeline items: text and thinking deltas, the tool calls of
complete ``assistant`` messages and their results in ``user`` messages.

Text streams as ``stream_event`` deltas; the complete ``assistant`` message that follows
repeats the text, so only its tool calls are taken from it (unless it was never streamed).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.events import (
    AssistantMessageItem,
    ErrorItem,
    ReasoningItem,
    TimelineItem,
    ToolCallItem,
    ToolStatus,
)

from paseo_claude import mapping


@dataclass
class _ToolCall:
    name: str
    input: dict[str, Any]


class StreamTranslator:
    """The per-session state of the translation (tool calls in flight, streamed messages)."""

    def __init__(self, cwd: str) -> None:
        self._cwd = cwd
        self._tools: dict[str, _ToolCall] = {}
        self._streamed: set[str] = set()
        self._fallback_blocks: dict[str, int] = {}
        self._stream_message_id: str | None = None

    def stream_event(self, event: Any) -> list[TimelineItem]:
        """Text and thinking deltas of a ``stream_event``."""
        if not isinstance(event, Mapping):
            return []
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, Mapping) and isinstance(message.get("id"), str):
                self._stream_message_id = message["id"]
            return []
        delta = event.get("delta")
        if kind != "content_block_delta" or self._stream_message_id is None:
            return []
        if not isinstance(delta, Mapping):
            return []
        message_id = f"{self._stream_message_id}:{event.get('index', 0)}"
        item: TimelineItem
        if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
            item = AssistantMessageItem(text=delta["text"], messageId=message_id)
        elif delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
            item = ReasoningItem(text=delta["thinking"], messageId=message_id)
        else:
            return []
        self._streamed.add(self._stream_message_id)
        return [item]

    def assistant(self, message: dict[str, Any]) -> list[TimelineItem]:
        """Tool calls (and text that was not streamed) of a complete ``assistant`` message."""
        body = message.get("message")
        if not isinstance(body, Mapping) or message.get("is_api_error_message"):
            # An API error is reported once, by the result that follows.
            return []
        message_id = str(body.get("id") or uuid.uuid4().hex)
        streamed = message_id in self._streamed
        content = body.get("content")
        items: list[TimelineItem] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind in ("text", "thinking") and not streamed:
                # Without stream deltas (a message Claude Code built itself) the block is the
                # whole text.
                index = self._fallback_blocks.get(message_id, 0)
                self._fallback_blocks[message_id] = index + 1
                block_id = f"{message_id}:b{index}"
                if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
                    items.append(AssistantMessageItem(text=block["text"], messageId=block_id))
                elif kind == "thinking" and isinstance(block.get("thinking"), str):
                    items.append(ReasoningItem(text=block["thinking"], messageId=block_id))
            elif kind == "tool_use":
                items += self._tool_use(block)
        return items

    def _tool_use(self, block: Mapping[str, Any]) -> list[TimelineItem]:
        call_id = str(block.get("id") or uuid.uuid4().hex)
        name = str(block.get("name") or "tool")
        raw_input = block.get("input")
        tool_input = dict(raw_input) if isinstance(raw_input, Mapping) else {}
        self._tools[call_id] = _ToolCall(name, tool_input)
        items = self.tool_event(call_id, "running")
        if name == "TodoWrite":
            todo = mapping.todo_item(tool_input)
            if todo is not None:
                items.append(todo)
        return items

    def tool_event(
        self,
        call_id: str,
        status: ToolStatus,
        *,
        output: str | None = None,
        structured: Any = None,
        error: str | None = None,
    ) -> list[TimelineItem]:
        """Call ``call_id`` in ``status`` (nothing for a call that is not known); a call that
        is no longer running is forgotten."""
        call = self._tools.get(call_id)
        if call is None:
            return []
        if status != "running":
            self._tools.pop(call_id, None)
        detail = mapping.tool_detail(
            call.name, call.input, output=output, cwd=self._cwd, structured=structured
        )
        item = ToolCallItem(
            callId=call_id, name=call.name, status=status, detail=detail, error=error
        )
        return [item]

    def user(self, message: dict[str, Any], *, canceling: bool) -> list[TimelineItem]:
        """Tool results of a ``user`` message (``canceling``: a failed call was canceled)."""
        body = message.get("message")
        content = body.get("content") if isinstance(body, Mapping) else None
        if not isinstance(content, list):
            return []
        items: list[TimelineItem] = []
        for block in content:
            if not isinstance(block, Mapping) or block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id"))
            text = mapping.tool_result_text(block.get("content"))
            if block.get("is_error"):
                status: ToolStatus = "canceled" if canceling else "failed"
                items += self.tool_event(call_id, status, output=text, error=text)
            else:
                items += self.tool_event(
                    call_id, "completed", output=text, structured=message.get("tool_use_result")
                )
        return items

    def cancel_running(self) -> list[TimelineItem]:
        """Every call still running, as canceled (its turn ended)."""
        items: list[TimelineItem] = []
        for call_id in list(self._tools):
            items += self.tool_event(call_id, "canceled")
        return items

    def end_turn(self) -> None:
        """Forget which messages streamed (the next turn starts afresh)."""
        self._streamed.clear()
        self._fallback_blocks.clear()


def api_retry_item(message: Mapping[str, Any]) -> ErrorItem:
    """A ``system``/``api_retry`` message as a timeline item: while Claude Code retries a
    failing model API (minutes, for an HTTP 500), ``logs``, ``attach`` and ``run`` show each
    attempt instead of staying silent."""
    status = message.get("error_status")
    error = message.get("error")
    attempt, limit = message.get("attempt"), message.get("max_retries")
    delay = message.get("retry_delay_ms")
    what = f"HTTP {status}" if isinstance(status, int) else "no answer"
    if isinstance(error, str) and error:
        what += f" ({error})"
    text = f"model API error: {what}; retrying"
    if isinstance(attempt, int):
        text += f" (attempt {attempt}" + (f" of {limit}" if isinstance(limit, int) else "") + ")"
    if isinstance(delay, int | float):
        text += f" in {delay / 1000:.1f}s"
    return ErrorItem(message=text)
