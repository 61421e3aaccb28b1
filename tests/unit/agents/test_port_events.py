"""The agent port's event delivery (:mod:`paseo.agents.port.subscribers`): typed callbacks per
subscriber, in order, each subscriber on its own bounded queue and task."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from paseo_hookspecs.agents import AgentObserver, RecordChange, TimelineEntry
from paseo_hookspecs.events import (
    AgentEvent,
    AllowResolution,
    AttentionRequired,
    PermissionRequest,
    PermissionRequested,
    PermissionResolution,
    PermissionResolved,
    TurnCompleted,
    TurnStarted,
)
from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.records import TimelineEntry as StoredEntry

from paseo.agents.feed import AgentFeed
from paseo.agents.port.subscribers import AgentSubscribers

NOW = "2026-01-01T00:00:00+00:00"


def record(agent_id: str, *, internal: bool = False, status: str = "idle") -> AgentRecord:
    fields: dict[str, Any] = {
        "id": agent_id,
        "provider": "scripted",
        "cwd": "/w",
        "createdAt": NOW,
        "updatedAt": NOW,
        "lastStatus": status,
    }
    if internal:
        fields["internal"] = True
    return AgentRecord.model_validate(fields)


def stored(agent_id: str, seq: int, event: AgentEvent) -> StoredEntry:
    return StoredEntry(
        agentId=agent_id,
        seq=seq,
        epoch="e1",
        timestamp=NOW,
        event=event.model_dump(mode="json", exclude_none=True),
    )


class Recorder(AgentObserver):
    """Writes down every callback, as ``(name, agent, detail)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.changed = asyncio.Event()

    def _note(self, *call: Any) -> None:
        self.calls.append(call)
        self.changed.set()

    async def on_record(self, change: RecordChange) -> None:
        self._note("record", change.record.id, change.kind, change.record.lastStatus)

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        self._note("event", agent_id, entry.seq, entry.event.type)

    async def on_attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        self._note("attention", agent_id, reason)

    async def on_permission_requested(self, agent_id: str, request: PermissionRequest) -> None:
        self._note("requested", agent_id, request.id)

    async def on_permission_resolved(
        self, agent_id: str, request_id: str, outcome: PermissionResolution | None
    ) -> None:
        self._note("resolved", agent_id, request_id, outcome.behavior if outcome else None)

    async def on_overflow(self, lost: int) -> None:
        self._note("overflow", lost)

    async def until(self, count: int) -> None:
        async with asyncio.timeout(10):
            while len(self.calls) < count:
                self.changed.clear()
                await self.changed.wait()


def test_callbacks_arrive_typed_and_in_order_per_agent() -> None:
    async def scenario() -> None:
        subscribers = AgentSubscribers()
        feed = AgentFeed([subscribers])
        seen = Recorder()
        subscribers.subscribe(seen, name="recorder")
        a, b = record("a"), record("b")
        request = PermissionRequest(id="r1", title="write", toolName="Write")
        feed.record_changed("created", a)
        feed.record_changed("created", b)
        feed.entry_committed(
            a, stored("a", 1, TurnStarted(provider="p")), TurnStarted(provider="p")
        )
        asked = PermissionRequested(provider="p", request=request)
        feed.entry_committed(a, stored("a", 2, asked), asked)
        feed.entry_committed(
            b, stored("b", 1, TurnStarted(provider="p")), TurnStarted(provider="p")
        )
        answered = PermissionResolved(provider="p", requestId="r1", resolution=AllowResolution())
        feed.entry_committed(a, stored("a", 3, answered), answered)
        done = TurnCompleted(provider="p")
        feed.entry_committed(a, stored("a", 4, done), done)
        attention = AttentionRequired(provider="p", reason="finished", timestamp=NOW)
        feed.entry_committed(a, stored("a", 5, attention), attention)
        feed.permissions_withdrawn(b, ["r9"])
        feed.record_changed("deleted", b)
        await seen.until(13)
        assert [c for c in seen.calls if c[1] == "a"] == [
            ("record", "a", "created", "idle"),
            ("event", "a", 1, "turn_started"),
            ("event", "a", 2, "permission_requested"),
            ("requested", "a", "r1"),
            ("event", "a", 3, "permission_resolved"),
            ("resolved", "a", "r1", "allow"),
            ("event", "a", 4, "turn_completed"),
            ("event", "a", 5, "attention_required"),
            ("attention", "a", "finished"),
        ]
        assert [c for c in seen.calls if c[1] == "b"] == [
            ("record", "b", "created", "idle"),
            ("event", "b", 1, "turn_started"),
            ("resolved", "b", "r9", None),
            ("record", "b", "deleted", "idle"),
        ]
        await subscribers.stop()

    asyncio.run(scenario())


def test_internal_agents_are_left_out_unless_asked_for() -> None:
    async def scenario() -> None:
        subscribers = AgentSubscribers()
        plain, everything = Recorder(), Recorder()
        subscribers.subscribe(plain, name="plain")
        subscribers.subscribe(everything, name="everything", include_internal=True)
        helper, user = record("helper", internal=True), record("user")
        subscribers.record_changed("created", helper)
        event = TurnStarted(provider="p")
        subscribers.entry_committed(helper, stored("helper", 1, event), event)
        subscribers.record_changed("created", user)
        await everything.until(3)
        await plain.until(1)
        assert [c[1] for c in everything.calls] == ["helper", "helper", "user"]
        assert plain.calls == [("record", "user", "created", "idle")]
        await subscribers.stop()

    asyncio.run(scenario())


class Stuck(Recorder):
    """Blocks in its first callback until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.entered = asyncio.Event()

    async def on_record(self, change: RecordChange) -> None:
        self.entered.set()
        await self.release.wait()
        await super().on_record(change)


def test_a_slow_subscriber_delays_neither_the_agent_nor_another_and_hears_of_its_losses() -> None:
    async def scenario() -> None:
        subscribers = AgentSubscribers()
        slow, quick = Stuck(), Recorder()
        subscribers.subscribe(slow, name="slow", max_pending=3)
        subscribers.subscribe(quick, name="quick")
        subscribers.record_changed("created", record("a", status="idle"))
        async with asyncio.timeout(10):
            await slow.entered.wait()  # the slow one is stuck in its first callback
        for _ in range(10):
            # The producer's call returns at once whatever the slow observer does.
            subscribers.record_changed("updated", record("a", status="running"))
        await quick.until(11)
        assert len(quick.calls) == 11
        assert slow.calls == []
        slow.release.set()
        # The first (in progress) and three queued ones are delivered; seven did not fit.
        await slow.until(5)
        assert [c[0] for c in slow.calls] == ["record"] * 4 + ["overflow"]
        assert slow.calls[-1] == ("overflow", 7)
        # After the overflow it receives again.
        subscribers.record_changed("updated", record("a", status="idle"))
        await slow.until(6)
        assert slow.calls[-1] == ("record", "a", "updated", "idle")
        await subscribers.stop()

    asyncio.run(scenario())


class Failing(Recorder):
    async def on_record(self, change: RecordChange) -> None:
        await super().on_record(change)
        raise RuntimeError(f"observer bug on {change.record.lastStatus}")


def test_a_raising_subscriber_is_logged_once_and_keeps_receiving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        subscribers = AgentSubscribers()
        failing = Failing()
        subscription = subscribers.subscribe(failing, name="buggy-plugin")
        for status in ("idle", "running", "error"):
            subscribers.record_changed("updated", record("a", status=status))
        await failing.until(3)
        assert [c[3] for c in failing.calls] == ["idle", "running", "error"]
        subscription.close()
        subscription.close()  # idempotent
        subscribers.record_changed("updated", record("a", status="closed"))
        await asyncio.sleep(0)
        assert len(failing.calls) == 3  # closed: nothing more is delivered

    with caplog.at_level(logging.ERROR, logger="paseo.agents.events"):
        asyncio.run(scenario())
    failures = [r for r in caplog.records if r.name == "paseo.agents.events"]
    assert len(failures) == 1
    assert "buggy-plugin" in failures[0].getMessage()
    assert failures[0].exc_info is not None


def test_only_the_callbacks_an_observer_overrides_are_queued() -> None:
    async def scenario() -> None:
        class RecordsOnly(AgentObserver):
            def __init__(self) -> None:
                self.changes: list[str] = []
                self.changed = asyncio.Event()

            async def on_record(self, change: RecordChange) -> None:
                self.changes.append(change.kind)
                self.changed.set()

        subscribers = AgentSubscribers()
        watcher = RecordsOnly()
        # A queue of one: timeline entries it does not watch must not crowd out its records.
        subscribers.subscribe(watcher, name="records", max_pending=1)
        a = record("a")
        for seq in range(1, 20):
            event = TurnStarted(provider="p")
            subscribers.entry_committed(a, stored("a", seq, event), event)
        subscribers.record_changed("updated", a)
        async with asyncio.timeout(10):
            await watcher.changed.wait()
        assert watcher.changes == ["updated"]
        await subscribers.stop()

    asyncio.run(scenario())
