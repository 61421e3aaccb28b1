"""What an ACP agent's ``session/update`` notifications say, without I/O: the session's settings,
slash commands, usage and title, the replay of a loaded conversation, and the timeline items of
the running turn. :class:`paseo_acp.session.AcpSession` feeds every update to
:meth:`SessionUpdates.apply` and emits the item it returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.events import AssistantMessageItem, ReasoningItem, TimelineItem
from paseo_hookspecs.interfaces.agent import SlashCommand

from paseo_acp import _mapping
from paseo_acp._history import Replay
from paseo_acp._options import SessionOptions
from paseo_acp._stream import TurnStream


class SessionUpdates:
    """See the module docstring."""

    def __init__(self) -> None:
        self.options = SessionOptions()
        self.commands: list[SlashCommand] = []
        self.title: str | None = None
        self.last_usage: dict[str, Any] | None = None
        """The newest ``usage_update`` of the running turn."""
        self.stream = TurnStream()
        self.loading = False
        """A ``session/load`` is under way: its updates replay the conversation."""
        self.replay = Replay()

    def turn_begun(self) -> None:
        self.stream.text = None
        self.last_usage = None

    def turn_ended(self) -> None:
        self.stream.reset()

    def item_made(self, item: TimelineItem) -> None:
        """``item`` goes into the timeline: text after a tool call or todo is a new message
        even without a new ``messageId``."""
        if not isinstance(item, AssistantMessageItem | ReasoningItem):
            self.stream.text = None

    def apply(self, update: Mapping[str, Any]) -> TimelineItem | None:
        """Take one update; the timeline item it makes, if any."""
        kind = update.get("sessionUpdate")
        # State first: these apply even while a loaded session replays its history.
        if kind == "current_mode_update" and isinstance(update.get("currentModeId"), str):
            self.options.set_current("mode", update["currentModeId"])
        elif kind == "config_option_update":
            self.options.update_from({"configOptions": update.get("configOptions") or []})
        elif kind == "available_commands_update":
            self.commands = _mapping.slash_commands(update.get("availableCommands"))
        elif kind == "usage_update":
            self.last_usage = dict(update)
        elif kind == "session_info_update" and isinstance(update.get("title"), str):
            self.title = update["title"]
        if self.loading:
            self.replay.add(update)
            return None
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            text = _mapping.content_text(update.get("content"))
            if not text:
                return None
            stream = "assistant" if kind == "agent_message_chunk" else "reasoning"
            message_id = self.stream.message_id(stream, update.get("messageId"))
            if stream == "assistant":
                return AssistantMessageItem(text=text, messageId=message_id)
            return ReasoningItem(text=text, messageId=message_id)
        if kind in ("tool_call", "tool_call_update"):
            call_id = update.get("toolCallId")
            if not isinstance(call_id, str):
                return None
            fields = {k: v for k, v in update.items() if k != "sessionUpdate"}
            self.stream.merge_tool(call_id, fields, replace=kind == "tool_call")
            return self.stream.tool_item(call_id)
        if kind == "plan":
            return _mapping.todo_item(update.get("entries"))
        return None
