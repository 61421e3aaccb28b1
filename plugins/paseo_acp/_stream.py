"""What a turn's ``session/update`` stream has said so far: tool calls (merged across updates)
and the message ids text chunks belong to. The session makes the items."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.events import ToolCallItem, ToolStatus

from paseo_acp import _mapping


class TurnStream:
    """See the module docstring; :meth:`reset` at the end of every turn."""

    def __init__(self) -> None:
        self._tools: dict[str, dict[str, Any]] = {}
        self._emitted: dict[str, Any] = {}
        self.text: tuple[str, str] | None = None
        """``(stream, messageId)`` of the text being streamed; ``None`` starts a new message."""

    def message_id(self, stream: str, given: Any) -> str:
        """The message id of a text chunk of ``stream`` (``assistant`` or ``reasoning``)."""
        if isinstance(given, str) and given:
            # Agents (claude-agent-acp) give a thought and its answer the same messageId;
            # they are different messages for Paseo, so thoughts get their own id.
            message_id = given if stream == "assistant" else f"{given}:thought"
            self.text = (stream, message_id)
            return message_id
        if self.text is None or self.text[0] != stream:
            self.text = (stream, f"{stream}_{uuid.uuid4().hex[:12]}")
        return self.text[1]

    def merge_tool(
        self, call_id: str, fields: Mapping[str, Any], *, replace: bool = False
    ) -> dict[str, Any]:
        """Lay ``fields`` over what is known of call ``call_id`` (``replace``: start over)."""
        call = {} if replace else self._tools.get(call_id, {})
        for key, value in fields.items():
            # tool_call_update sends only what changed; null means "unchanged" for us.
            if value is not None:
                call[key] = value
        self._tools[call_id] = call
        return call

    def tool_item(self, call_id: str) -> ToolCallItem | None:
        """The call as a timeline item, or ``None`` when nothing changed since the last one."""
        call = self._tools[call_id]
        status: ToolStatus = call.get("_paseo_status") or _mapping.tool_status(call.get("status"))
        item = ToolCallItem(
            callId=call_id,
            name=_mapping.tool_name(call),
            status=status,
            detail=_mapping.tool_detail(call),
            error=_mapping.tool_output(call) if status == "failed" else None,
        )
        fingerprint = item.model_dump(mode="json")
        if self._emitted.get(call_id) == fingerprint:
            return None
        self._emitted[call_id] = fingerprint
        return item

    def cut_short(self, status: ToolStatus) -> list[str]:
        """Mark every running call ``status`` (the turn ended without them); their ids."""
        ended = []
        for call_id, call in self._tools.items():
            if _mapping.tool_status(call.get("status")) == "running":
                call["_paseo_status"] = status
                ended.append(call_id)
        return ended

    def reset(self) -> None:
        self._tools.clear()
        self._emitted.clear()
