"""A Codex thread's conversation as ``thread/read`` (``includeTurns``) reports it.

The answer's ``thread.turns[].items[]`` are the same items a live turn streams; the messages are
the ``userMessage`` (its text parts) and ``agentMessage`` ones.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.events import AssistantMessageItem, TimelineItem, UserMessageItem

from .mapping import as_dict, user_text

READ_TIMEOUT = 20.0
"""Seconds Codex gets to answer ``thread/read``."""


def thread_messages(result: Any) -> list[TimelineItem]:
    """The user and agent messages of a ``thread/read`` result, in order."""
    turns = as_dict(as_dict(result).get("thread")).get("turns")
    items: list[TimelineItem] = []
    for turn in turns if isinstance(turns, list) else []:
        entries = as_dict(turn).get("items")
        for raw in entries if isinstance(entries, list) else []:
            item = as_dict(raw)
            if item.get("type") == "userMessage":
                text = user_text(item.get("content"))
                if text.strip():
                    items.append(UserMessageItem(text=text))
            elif item.get("type") == "agentMessage" and isinstance(item.get("text"), str):
                message_id = item.get("id") if isinstance(item.get("id"), str) else None
                if item["text"].strip():
                    items.append(AssistantMessageItem(text=item["text"], messageId=message_id))
    return items
