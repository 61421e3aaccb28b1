"""Numbering, coalescing, batching and continuation of a timeline, on the real JSON store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from paseo_hookspecs.events import (
    AssistantMessageItem,
    ReasoningItem,
    Timeline,
    TurnCompleted,
    TurnStarted,
)
from paseo_hookspecs.records import TimelineEntry
from paseo_store_json import JsonStore

from paseo.agents.timeline import AgentTimeline, Committed

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


def test_text_alone_is_committed_without_waiting_for_a_timer(tmp_path: Path) -> None:
    # A subscriber gets a streamed chunk as soon as it is durable: nothing holds text back for
    # a window (a 60 ms timer used to, most of a chunk's latency to a client).
    committed: list[TimelineEntry] = []

    async def commit(batch: list[Committed]) -> None:
        committed.extend(c.entry for c in batch)

    async def body(store: JsonStore) -> None:
        timeline = AgentTimeline(AGENT, store.timeline, commit)
        await timeline.load()
        assert await timeline.add(_text("lonely")) is None
        assert committed == []
        for _ in range(50):  # loop iterations, no timer can fire
            await asyncio.sleep(0)
            if committed:
                break
        assert [e.event["item"]["text"] for e in committed] == ["lonely"]

    _with_store(tmp_path, body)


def test_chunks_arriving_while_an_append_is_in_flight_merge(tmp_path: Path) -> None:
    # The store's pace sets the coalescing: text that arrives while a batch is being appended
    # becomes one entry, numbered when the writer is ready for it.
    committed: list[TimelineEntry] = []

    async def body(store: JsonStore) -> None:
        release = asyncio.Event()
        appending = asyncio.Event()
        append = store.timeline.append

        async def slow_append(entries: list[TimelineEntry]) -> None:
            appending.set()
            await release.wait()
            await append(entries)

        store.timeline.append = slow_append  # type: ignore[method-assign]

        async def commit(batch: list[Committed]) -> None:
            committed.extend(c.entry for c in batch)

        timeline = AgentTimeline(AGENT, store.timeline, commit)
        await timeline.add(_text("first "))
        await asyncio.wait_for(appending.wait(), 5)
        for index in range(10):
            await timeline.add(_text(f"{index} "))
            await asyncio.sleep(0)
        release.set()
        await timeline.drain()
        texts = [e.event["item"]["text"] for e in committed]
        assert texts == ["first ", "".join(f"{i} " for i in range(10))]
        assert [e.seq for e in committed] == [1, 2]

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
