"""Refilling an agent's timeline from the provider program's own history.

After a session is resumed (or imported), :meth:`AgentSession.history` tells what the program
remembers of the conversation. The messages Paseo's timeline lacks are appended to it, so an
imported conversation, or turns taken outside Paseo (``claude --resume`` in a terminal), show up;
what Paseo already recorded is never added twice. The rule (:func:`missing`) is pure: the
program's messages are matched in order against the timeline's, a message matches the next one
with the same role and text (whitespace aside), and the missing ones are those after the last
match. An unmatched message before it happened while Paseo was recording the conversation: it
is one the program made up for itself (Claude Code's "[Request interrupted by user]"), not a
turn Paseo missed. Only the newest part of the timeline is compared (:func:`newest_messages`,
read backward): an agent with a million entries is not loaded whole to resume it.
"""

from __future__ import annotations

import asyncio
import logging
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Literal

from paseo_hookspecs.events import AssistantMessageItem, Timeline, TimelineItem, UserMessageItem
from paseo_hookspecs.interfaces.agent import AgentSession
from paseo_hookspecs.records import TimelineEntry
from paseo_hookspecs.store import MAX_PAGE_SIZE, TimelineRepository

from paseo.agents.live import LiveAgent
from paseo.agents.roster import AgentRoster

log = logging.getLogger("paseo.agents")

HISTORY_TIMEOUT = 30.0
"""Seconds a session gets to answer :meth:`AgentSession.history`; past it nothing is refilled."""

Role = Literal["user", "assistant"]
Message = tuple[Role, str]

MessageItem = UserMessageItem | AssistantMessageItem


def _key(text: str) -> str:
    return " ".join(text.split())


def recorded(entries: Iterable[TimelineEntry]) -> list[Message]:
    """The messages of a stored timeline, in order: an assistant message's chunks (the entries
    sharing its ``messageId``) joined into one."""
    messages: list[Message] = []
    current: str | None = None
    for entry in entries:
        item = entry.event.get("item") if entry.event.get("type") == "timeline" else None
        if not isinstance(item, dict):
            continue
        kind, text = item.get("type"), item.get("text")
        if not isinstance(text, str):
            continue
        if kind == "user_message":
            messages.append(("user", text))
            current = None
        elif kind == "assistant_message":
            message_id = item.get("messageId")
            if messages and messages[-1][0] == "assistant" and message_id == current:
                messages[-1] = ("assistant", messages[-1][1] + text)
            else:
                messages.append(("assistant", text))
            current = message_id if isinstance(message_id, str) else None
    return messages


def missing(history: Sequence[TimelineItem], have: Sequence[Message]) -> list[MessageItem]:
    """The messages of ``history`` that ``have`` lacks (see the module docstring). Linear in
    both lengths (up to a logarithm): it runs on the daemon's event loop."""
    spots: dict[Message, list[int]] = {}
    for index, (kind, text) in enumerate(have):
        spots.setdefault((kind, _key(text)), []).append(index)
    found = 0
    lacking: list[MessageItem] = []
    for item in history:
        if not isinstance(item, UserMessageItem | AssistantMessageItem) or not item.text.strip():
            continue
        role: Role = "user" if isinstance(item, UserMessageItem) else "assistant"
        places = spots.get((role, _key(item.text)), [])
        at = bisect_left(places, found)
        if at == len(places):
            lacking.append(item)
        else:
            found = places[at] + 1
            lacking = []  # what came before a match is not new
    return lacking


def _is_message(entry: TimelineEntry) -> bool:
    item = entry.event.get("item") if entry.event.get("type") == "timeline" else None
    return isinstance(item, dict) and item.get("type") in ("user_message", "assistant_message")


async def newest_messages(
    timeline: TimelineRepository, agent_id: str, wanted: int
) -> list[Message]:
    """The newest messages of a stored timeline, at least ``wanted`` of them (all when it has
    fewer): read backward a page at a time, keeping only the message entries (what
    :func:`recorded` reads), so a long timeline costs what its newest messages do, not all of
    it. The oldest message kept may have lost earlier chunks to the cut; it is dropped unless
    the read reached the timeline's start."""
    kept: list[list[TimelineEntry]] = []
    count = 0
    before: int | None = None
    while True:
        page = await timeline.read(agent_id, before_seq=before, limit=MAX_PAGE_SIZE, tail=True)
        kept.append([entry for entry in page if _is_message(entry)])
        count += len(kept[-1])
        if len(page) < MAX_PAGE_SIZE:
            break
        before = page[0].seq
        if count <= wanted:
            continue  # fewer entries than wanted messages: no need to join them yet
        messages = recorded(entry for chunk in reversed(kept) for entry in chunk)
        if len(messages) > wanted:
            return messages[1:]
    return recorded(entry for chunk in reversed(kept) for entry in chunk)


async def refill(roster: AgentRoster, agent: LiveAgent, session: AgentSession) -> int:
    """Append to the agent's timeline the messages the program remembers and it lacks; returns
    how many. A session that cannot tell (or fails to, or takes too long) adds nothing."""
    try:
        history = await asyncio.wait_for(session.history(), HISTORY_TIMEOUT)
    except Exception:
        log.warning("agent %s: reading the program's history failed", agent.id, exc_info=True)
        return 0
    if not history:
        return 0
    await agent.timeline.drain()
    # Twice the program's messages: enough of the timeline to hold every one of them even when
    # Paseo recorded others in between (a program's history can be a compacted subset).
    wanted = 2 * sum(isinstance(item, UserMessageItem | AssistantMessageItem) for item in history)
    lacking = missing(history, await newest_messages(roster.store.timeline, agent.id, wanted))
    provider = agent.record.provider
    for number, item in enumerate(lacking):
        # Each reply its own message id: two refilled replies in a row are two messages.
        message = (
            item.model_copy(update={"messageId": item.messageId or f"history-{number}"})
            if isinstance(item, AssistantMessageItem)
            else item
        )
        await roster.ingest(agent, Timeline(provider=provider, item=message))
    if lacking:
        await agent.timeline.drain()
    return len(lacking)
