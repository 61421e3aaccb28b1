"""The conversation an ACP agent replays while it answers ``session/load``.

The replay arrives as ``user_message_chunk`` / ``agent_message_chunk`` updates before the load
result; the session does not stream it into the timeline (the kernel refills what it lacks from
:meth:`AgentSession.history`), it keeps the messages here: consecutive chunks of one role join
into one message unless their ``messageId`` says they belong to different ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.events import AssistantMessageItem, TimelineItem, UserMessageItem

from paseo_acp._mapping import content_text

_ROLES = {"user_message_chunk": "user", "agent_message_chunk": "assistant"}


class Replay:
    """The replayed messages, in order."""

    def __init__(self) -> None:
        self._messages: list[list[Any]] = []  # [role, text, messageId]

    def add(self, update: Mapping[str, Any]) -> None:
        role = _ROLES.get(str(update.get("sessionUpdate")))
        text = content_text(update.get("content")) if role else None
        if role is None or not text:
            return
        raw_id = update.get("messageId")
        message_id = raw_id if isinstance(raw_id, str) else None
        last = self._messages[-1] if self._messages else None
        same = (
            last is not None
            and last[0] == role
            and (last[2] is None or message_id is None or last[2] == message_id)
        )
        if last is not None and same:
            last[1] += text
            last[2] = last[2] or message_id
        else:
            self._messages.append([role, text, message_id])

    def items(self) -> list[TimelineItem]:
        return [
            UserMessageItem(text=text, messageId=message_id)
            if role == "user"
            else AssistantMessageItem(text=text, messageId=message_id)
            for role, text, message_id in self._messages
        ]
