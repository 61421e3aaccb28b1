"""Numbering, coalescing, batching and continuation of a timeline, on the real JSON store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from paseo_hookspecs.events import (
    AssistantMessageItem,
    ReasoningItem,
    Timeline,
    TurnCompleted,
    TurnStarted,
)
from paseo_hookspecs.records import TimelineEntry
from paseo_store_json import JsonStore

from paseo.agents.timeline import COALESCE_WINDOW, AgentTimeline, Committed

AGENT = "aaaa1111-0000-4000-8000-000000000001"


def _text(chunk: str, message: str = "m1", kind: str = "assistant_message") -> Timeline:
    item = (ReasoningItem if kind == "reasoning" else AssistantMessageItem)(
        text=chunk, messageId=message
    )
    return Timeline(provider="p", item=item)


def _with_store(home: Path, body: Callable[[JsonStore], Awaitable[None]]) -> None:
    async def run() -> None:
        store = JsonStore(home)
        await store.open()
        try:
            await asyncio.wait_for(body(store), 30)
        finally:
            await store.close()

    asyncio.run(run())


def test_chunks_coalesce_other_events_flush_and_order_holds(tmp_path: Path) -> None:
    committed: list[TimelineEntry] = []
    batches: list[int] = []

    async def commit(batch: list[Committed]) -> None:
        batches.append(len(batch))
        committed.extend(c.entry for c in batch)

    async def body(store: JsonStore) -> None:
        timeline = AgentTimeline(AGENT, store.timeline, commit)
        await timeline.add(TurnStarted(provider="p"))
        for index in range(500):
            await timeline.add(_text(f"{index} "))
        await timeline.add(_text("why", kind="reasoning"))
        await timeline.add(_text("second", message="m2"))
        await timeline.add(TurnCompleted(provider="p"))
        await timeline.drain()
        stored = await store.timeline.read(AGENT)
        assert [e.seq for e in stored] == [e.seq for e in committed] == [1, 2, 3, 4, 5]
        assert stored == committed

    _with_store(tmp_path, body)
    kinds = [e.event.get("item", {}).get("type", e.event["type"]) for e in committed]
    assert kinds == [
        "turn_started",
        "assistant_message",
        "reasoning",
        "assistant_message",
        "turn_completed",
    ]
    assert committed[1].event["item"]["text"] == "".join(f"{i} " for i in range(500))
    assert len({e.epoch for e in committed}) == 1
    assert sum(batches) == 5
    assert len(batches) < 5, "appends are batched"


def test_text_alone_is_flushed_by_the_window(tmp_path: Path) -> None:
    committed: list[TimelineEntry] = []

    async def body(store: JsonStore) -> None:
        arrived = asyncio.Event()

        async def commit(batch: list[Committed]) -> None:
            committed.extend(c.entry for c in batch)
            arrived.set()

        timeline = AgentTimeline(AGENT, store.timeline, commit)
        started = asyncio.get_running_loop().time()
        await timeline.add(_text("lonely"))
        assert committed == []
        await asyncio.wait_for(arrived.wait(), 5)
        assert asyncio.get_running_loop().time() - started >= COALESCE_WINDOW * 0.9
        assert [e.event["item"]["text"] for e in committed] == ["lonely"]

    _with_store(tmp_path, body)


def test_a_reopened_timeline_continues_epoch_and_sequence(tmp_path: Path) -> None:
    seen: list[TimelineEntry] = []

    async def commit(batch: list[Committed]) -> None:
        seen.extend(c.entry for c in batch)

    async def first(store: JsonStore) -> None:
        timeline = AgentTimeline(AGENT, store.timeline, commit)
        for _ in range(3):
            await timeline.add(TurnStarted(provider="p"))
        await timeline.drain()

    async def second(store: JsonStore) -> None:
        timeline = AgentTimeline(AGENT, store.timeline, commit)
        await timeline.add(TurnCompleted(provider="p"))
        await timeline.drain()

    _with_store(tmp_path, first)
    _with_store(tmp_path, second)
    assert [e.seq for e in seen] == [1, 2, 3, 4]
    assert len({e.epoch for e in seen}) == 1


def test_add_returns_the_seq_and_committed_waits_for_its_commit(tmp_path: Path) -> None:
    committed: list[int] = []
    release = asyncio.Event()

    async def commit(batch: list[Committed]) -> None:
        await release.wait()
        committed.extend(c.entry.seq for c in batch)

    async def body(store: JsonStore) -> None:
        timeline = AgentTimeline(AGENT, store.timeline, commit)
        assert await timeline.add(TurnStarted(provider="p")) == 1
        assert await timeline.add(_text("held for merging")) is None
        seq = await timeline.add(TurnCompleted(provider="p"))
        assert seq == 3
        waiter = asyncio.ensure_future(timeline.committed(seq))
        await asyncio.sleep(0.05)
        assert not waiter.done()  # written, not yet committed
        assert [e.seq for e in await store.timeline.read(AGENT)] == [1, 2, 3]
        release.set()
        await asyncio.wait_for(waiter, 5)
        assert committed == [1, 2, 3]
        await timeline.committed(1)  # already committed: returns at once

    _with_store(tmp_path, body)


def test_an_entry_is_built_without_validating_it_again(tmp_path: Path, monkeypatch: Any) -> None:
    # The entry's fields are values the timeline made (an id, a counter, an epoch, a timestamp,
    # an event's dump): validating them again per streamed chunk was a tenth of its cost.
    committed: list[TimelineEntry] = []

    async def commit(batch: list[Committed]) -> None:
        committed.extend(c.entry for c in batch)

    def no_validation(self: TimelineEntry, **_data: Any) -> None:
        raise AssertionError("the entry was validated again")

    async def body(store: JsonStore) -> None:
        timeline = AgentTimeline(AGENT, store.timeline, commit)
        await timeline.load()
        monkeypatch.setattr(TimelineEntry, "__init__", no_validation)
        await timeline.add(TurnStarted(provider="p"))
        await timeline.add(_text("chunk"))
        await timeline.drain()
        monkeypatch.undo()
        stored = await store.timeline.read(AGENT)
        assert stored == committed
        assert [e.model_fields_set for e in committed] == [set(TimelineEntry.model_fields)] * 2

    _with_store(tmp_path, body)
