"""``AgentEvents``: typed agent facts delivered to each subscriber by its own task.

:class:`AgentSubscribers` is one of the :class:`~paseo.agents.feed.AgentFeed`'s listeners: for
every fact it turns into an :class:`~paseo_hookspecs.agents.AgentObserver` callback it only
appends to each interested subscriber's queue (bounded by ``max_pending``) and wakes that
subscriber's task, so the agent that caused the fact never waits for an observer, and one
observer never waits for another. A full queue drops what does not fit and counts it; once
the queue has drained the observer hears ``on_overflow(lost)`` and can resync through the
control. A callback that raises is logged once, with the subscriber's name, and the
subscriber goes on receiving.

The models handed over are made once per fact and shared by every subscriber (they are
frozen); a subscriber is only queued callbacks it overrides, so observers that watch records
alone cost the timeline's hot path a flag test each.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Sequence
from typing import Any

from paseo_hookspecs.agents import AgentObserver, RecordChange, RecordChangeKind, TimelineEntry
from paseo_hookspecs.events import (
    AgentEvent,
    AttentionRequired,
    PermissionRequested,
    PermissionResolved,
)
from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.records import TimelineEntry as StoredEntry

log = logging.getLogger("paseo.agents.events")

CALLBACKS = (
    "on_record",
    "on_event",
    "on_attention",
    "on_permission_requested",
    "on_permission_resolved",
)


def _overrides(observer: AgentObserver, name: str) -> bool:
    """Whether ``observer`` does something on ``name`` (the base class's callbacks do not)."""
    method = getattr(type(observer), name, None)
    return callable(method) and method is not getattr(AgentObserver, name)


class _Subscriber:
    """One subscription: its queue, its task, what it wants."""

    def __init__(
        self,
        owner: AgentSubscribers,
        observer: AgentObserver,
        name: str,
        max_pending: int,
        include_internal: bool,
    ) -> None:
        self._owner = owner
        self.observer = observer
        self.name = name
        self.max_pending = max(1, max_pending)
        self.include_internal = include_internal
        wants = {callback: _overrides(observer, callback) for callback in CALLBACKS}
        self.wants_record = wants["on_record"]
        self.wants_event = wants["on_event"]
        self.wants_attention = wants["on_attention"]
        self.wants_requested = wants["on_permission_requested"]
        self.wants_resolved = wants["on_permission_resolved"]
        self._queue: deque[tuple[str, tuple[Any, ...]]] = deque()
        self._lost = 0
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._failed = False
        self.closed = False

    def put(self, callback: str, args: tuple[Any, ...]) -> None:
        if self.closed:
            return
        if len(self._queue) >= self.max_pending:
            self._lost += 1
            return
        self._queue.append((callback, args))
        if self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"agent-observer:{self.name}"
            )
        elif self._wake is not None:
            self._wake.set()

    async def _run(self) -> None:
        wake = self._wake
        assert wake is not None
        while not self.closed:
            while self._queue:
                callback, args = self._queue.popleft()
                await self._call(callback, args)
                if self.closed:
                    return
            if self._lost:
                lost, self._lost = self._lost, 0
                await self._call("on_overflow", (lost,))
                continue
            wake.clear()
            await wake.wait()

    async def _call(self, callback: str, args: tuple[Any, ...]) -> None:
        try:
            await getattr(self.observer, callback)(*args)
        except asyncio.CancelledError:
            raise
        except Exception:
            if not self._failed:
                # Once: an observer failing on every entry must not flood the log.
                self._failed = True
                log.exception(
                    "agent observer %r failed in %s (further failures are not logged)",
                    self.name,
                    callback,
                )

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._queue.clear()
        self._owner.discard(self)
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()


class AgentSubscribers:
    """:class:`paseo_hookspecs.agents.AgentEvents` and a
    :class:`~paseo.agents.feed.FeedListener` (see the module docstring)."""

    name = "agent-events"

    def __init__(self) -> None:
        self._subscribers: tuple[_Subscriber, ...] = ()

    def subscribe(
        self,
        observer: AgentObserver,
        *,
        name: str,
        max_pending: int = 1024,
        include_internal: bool = False,
    ) -> _Subscriber:
        subscriber = _Subscriber(self, observer, name, max_pending, include_internal)
        # Replaced, not mutated: a delivery loop in progress keeps the tuple it started with.
        self._subscribers = (*self._subscribers, subscriber)
        return subscriber

    def discard(self, subscriber: _Subscriber) -> None:
        self._subscribers = tuple(s for s in self._subscribers if s is not subscriber)

    # ----------------------------------------------------------- service lifecycle

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        """Every subscription ends (the daemon is stopping; plugins closed theirs already)."""
        for subscriber in self._subscribers:
            subscriber.close()

    # ----------------------------------------------------------- feed listener

    def record_changed(self, kind: RecordChangeKind, record: AgentRecord) -> None:
        change: RecordChange | None = None
        for subscriber in self._subscribers:
            if not subscriber.wants_record or (record.internal and not subscriber.include_internal):
                continue
            if change is None:
                change = RecordChange(kind=kind, record=record)
            subscriber.put("on_record", (change,))

    def entry_committed(self, record: AgentRecord, entry: StoredEntry, event: AgentEvent) -> None:
        subscribers = self._subscribers
        if not subscribers:
            return
        agent_id = record.id
        typed: TimelineEntry | None = None
        for subscriber in subscribers:
            if record.internal and not subscriber.include_internal:
                continue
            if subscriber.wants_event:
                if typed is None:
                    # The event is the validated model the timeline holds: no second validation.
                    typed = TimelineEntry.model_construct(
                        seq=entry.seq, epoch=entry.epoch, timestamp=entry.timestamp, event=event
                    )
                subscriber.put("on_event", (agent_id, typed))
            if isinstance(event, AttentionRequired):
                if subscriber.wants_attention:
                    subscriber.put("on_attention", (agent_id, event.reason, event.timestamp))
            elif isinstance(event, PermissionRequested):
                if subscriber.wants_requested:
                    subscriber.put("on_permission_requested", (agent_id, event.request))
            elif isinstance(event, PermissionResolved) and subscriber.wants_resolved:
                subscriber.put(
                    "on_permission_resolved", (agent_id, event.requestId, event.resolution)
                )

    def permissions_withdrawn(self, record: AgentRecord, request_ids: Sequence[str]) -> None:
        for subscriber in self._subscribers:
            if not subscriber.wants_resolved or (
                record.internal and not subscriber.include_internal
            ):
                continue
            for request_id in request_ids:
                subscriber.put("on_permission_resolved", (record.id, request_id, None))
