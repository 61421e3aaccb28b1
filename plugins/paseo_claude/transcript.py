"""Reading a Claude Code session transcript: the conversation Claude Code keeps on disk.

Claude Code appends every session to ``<config dir>/projects/<cwd, / and . as ->/<id>.jsonl``,
the config dir being ``$CLAUDE_CONFIG_DIR`` or ``$HOME/.claude`` of the agent's environment. A
line of ``type`` ``user`` or ``assistant`` holds one API message; an assistant message is
written one line per content block, all with the same ``message.id``. Meta lines (Claude's own
reminders), lines Claude Code writes itself (``rowSource: harness``, such as "[Request interrupted
by user]"), sub-agent lines (``isSidechain``) and tool results are not the conversation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from paseo_hookspecs.events import AssistantMessageItem, TimelineItem, UserMessageItem


def transcript_path(env: Mapping[str, str], session_id: str) -> Path | None:
    """The transcript of ``session_id`` under the config dir ``env`` names, if it exists."""
    config = env.get("CLAUDE_CONFIG_DIR")
    home = env.get("HOME") or os.environ.get("HOME")
    root = Path(config) if config else Path(home) / ".claude" if home else None
    if root is None or "/" in session_id or session_id.startswith("."):
        return None
    return next(iter(sorted((root / "projects").glob(f"*/{session_id}.jsonl"))), None)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(block.get("text"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and block.get("text")
    )


def messages(lines: Iterable[str]) -> list[TimelineItem]:
    """The user and assistant messages of a transcript's lines, in order."""
    items: list[TimelineItem] = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash, or not JSON: not a message
        if not isinstance(row, dict) or row.get("isMeta") or row.get("isSidechain"):
            continue
        if row.get("rowSource") == "harness":
            continue
        message = row.get("message")
        if row.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        text = _text(message.get("content"))
        if not text.strip():
            continue
        if row["type"] == "user":
            items.append(UserMessageItem(text=text))
            continue
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        last = items[-1] if items else None
        if (
            isinstance(last, AssistantMessageItem)
            and message_id is not None
            and last.messageId == message_id
        ):
            items[-1] = AssistantMessageItem(text=last.text + text, messageId=message_id)
        else:
            items.append(AssistantMessageItem(text=text, messageId=message_id))
    return items


def read_history(env: Mapping[str, str], session_id: str) -> list[TimelineItem] | None:
    """The messages of ``session_id``'s transcript, or ``None`` when there is none."""
    path = transcript_path(env, session_id)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return messages(handle)
    except OSError:
        return None
