"""Titles on first prompts (:mod:`paseo.metadata.titles`): the metadata service hears of an
untitled agent's first prompt on the agent port and asks for its title once per run."""

from __future__ import annotations

import asyncio

from paseo_hookspecs.agents import TimelineEntry
from paseo_hookspecs.events import (
    AssistantMessageItem,
    Timeline,
    TimelineItem,
    TurnStarted,
    UserMessageItem,
)

from paseo.metadata.titles import FirstPromptTitles


def entry(item: TimelineItem | None = None) -> TimelineEntry:
    event = Timeline(provider="p", item=item) if item is not None else TurnStarted(provider="p")
    return TimelineEntry(seq=1, epoch="e", timestamp="2026-01-01T00:00:00Z", event=event)


def prompt(text: str, message_id: str | None = "m1") -> TimelineEntry:
    return entry(UserMessageItem(text=text, messageId=message_id))


def titles_for(untitled: dict[str, str], entries: list[tuple[str, TimelineEntry]]) -> list:
    asked: list[tuple[str, str, str]] = []

    async def untitled_cwd(agent_id: str) -> str | None:
        return untitled.get(agent_id)

    observer = FirstPromptTitles(untitled_cwd, lambda *args: asked.append(args))

    async def scenario() -> None:
        for agent_id, item in entries:
            await observer.on_event(agent_id, item)

    asyncio.run(scenario())
    return asked


def test_an_untitled_agents_first_prompt_asks_for_its_title_once() -> None:
    asked = titles_for(
        {"a1": "/w"},
        [
            ("a1", entry()),
            ("a1", entry(AssistantMessageItem(text="hi"))),
            ("a1", prompt("fix the parser")),
            ("a1", prompt("and the lexer", "m2")),
        ],
    )
    assert asked == [("a1", "/w", "fix the parser")]


def test_a_titled_agent_and_a_message_from_the_programs_history_ask_nothing() -> None:
    # ``a2`` has a title (or is internal, or gone): the port answers no cwd. A refilled
    # message (read back from the program's own history) has no message id.
    asked = titles_for({"a1": "/w"}, [("a2", prompt("x")), ("a1", prompt("old", None))])
    assert asked == []
