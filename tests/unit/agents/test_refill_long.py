"""Refilling a long timeline reads its newest pages backward, not every entry."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from paseo_hookspecs.records import TimelineEntry
from paseo_hookspecs.store import MAX_PAGE_SIZE
from paseo_store_json import JsonStore

from paseo.agents.refill import newest_messages, recorded

AGENT = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"
ENTRIES = 5 * MAX_PAGE_SIZE + 17


def _item(seq: int) -> dict[str, Any]:
    """A user message, a reply in two chunks, a tool call; and so on."""
    turn, step = divmod(seq, 4)
    if step == 0:
        return {"type": "user_message", "text": f"ask {turn}", "messageId": f"u{turn}"}
    if step in (1, 2):
        return {"type": "assistant_message", "text": f"part {step} ", "messageId": f"m{turn}"}
    return {"type": "tool_call", "callId": f"c{seq}", "name": "x", "status": "completed"}


def _entry(seq: int) -> TimelineEntry:
    return TimelineEntry(
        agentId=AGENT,
        seq=seq,
        epoch="e",
        timestamp="2026-01-01T00:00:00+00:00",
        event={"type": "timeline", "provider": "p", "item": _item(seq)},
    )


class _Counting:
    """The store's timeline, counting the entries it returns."""

    def __init__(self, timeline: Any) -> None:
        self.timeline = timeline
        self.returned = 0

    async def read(self, agent_id: str, **kwargs: Any) -> list[TimelineEntry]:
        page: list[TimelineEntry] = await self.timeline.read(agent_id, **kwargs)
        self.returned += len(page)
        return page


def test_the_newest_messages_come_from_the_last_pages(tmp_path: Path) -> None:
    entries = [_entry(seq) for seq in range(1, ENTRIES + 1)]
    every = recorded(entries)

    async def scenario() -> tuple[list[Any], int, list[Any], int]:
        store = JsonStore(tmp_path)
        await store.open()
        try:
            for start in range(0, ENTRIES, 500):
                await store.timeline.append(entries[start : start + 500])
            few = _Counting(store.timeline)
            newest = await newest_messages(few, AGENT, 10)  # type: ignore[arg-type]
            many = _Counting(store.timeline)
            whole = await newest_messages(many, AGENT, len(every) + 1)  # type: ignore[arg-type]
            return newest, few.returned, whole, many.returned
        finally:
            await store.close()

    newest, read_few, whole, read_many = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert newest == every[-len(newest) :]
    assert len(newest) >= 10
    assert read_few == MAX_PAGE_SIZE  # one page of the six
    assert whole == every
    assert read_many == ENTRIES
