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
        # Indexes by interest, rebuilt when a subscription starts or ends (tuples replaced, not
        # mutated: a delivery loop in progress keeps the ones it started with). A timeline
        # entry nobody watches costs one dictionary lookup.
        self._records: tuple[_Subscriber, ...] = ()
        self._entries: tuple[_Subscriber, ...] = ()
        self._by_type: dict[str, tuple[_Subscriber, ...]] = {}
        self._withdrawals: tuple[_Subscriber, ...] = ()

    def subscribe(
        self,
        observer: AgentObserver,
        *,
        name: str,
        max_pending: int = 1024,
        include_internal: bool = False,
    ) -> _Subscriber:
        subscriber = _Subscriber(self, observer, name, max_pending, include_internal)
        self._index((*self._subscribers, subscriber))
        return subscriber

    def discard(self, subscriber: _Subscriber) -> None:
        self._index(tuple(s for s in self._subscribers if s is not subscriber))

    def _index(self, subscribers: tuple[_Subscriber, ...]) -> None:
        self._subscribers = subscribers
        self._records = tuple(s for s in subscribers if s.wants_record)
        self._entries = tuple(s for s in subscribers if s.wants_event)
        self._withdrawals = tuple(s for s in subscribers if s.wants_resolved)
        by_type = {
            "attention_required": tuple(s for s in subscribers if s.wants_attention),
            "permission_requested": tuple(s for s in subscribers if s.wants_requested),
            "permission_resolved": self._withdrawals,
        }
        self._by_type = {kind: found for kind, found in by_type.items() if found}

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
        for subscriber in self._records:
            if record.internal and not subscriber.include_internal:
                continue
            if change is None:
                change = RecordChange(kind=kind, record=record)
            subscriber.put("on_record", (change,))

    def entry_committed(self, record: AgentRecord, entry: StoredEntry, event: AgentEvent) -> None:
        special = self._by_type.get(event.type)
        watchers = self._entries
        if not watchers and special is None:
            return
        agent_id, internal = record.id, record.internal
        if watchers:
            # The event is the validated model the timeline holds: no second validation.
            typed = TimelineEntry.model_construct(
                seq=entry.seq, epoch=entry.epoch, timestamp=entry.timestamp, event=event
            )
            for subscriber in watchers:
                if not internal or subscriber.include_internal:
                    subscriber.put("on_event", (agent_id, typed))
        if special is None:
            return
        args: tuple[Any, ...]
        if isinstance(event, AttentionRequired):
            callback, args = "on_attention", (agent_id, event.reason, event.timestamp)
        elif isinstance(event, PermissionRequested):
            callback, args = "on_permission_requested", (agent_id, event.request)
        elif isinstance(event, PermissionResolved):
            callback, args = "on_permission_resolved", (agent_id, event.requestId, event.resolution)
        else:
            return
        for subscriber in special:
            if not internal or subscriber.include_internal:
                subscriber.put(callback, args)

    def permissions_withdrawn(self, record: AgentRecord, request_ids: Sequence[str]) -> None:
        for subscriber in self._withdrawals:
            if record.internal and not subscriber.include_internal:
                continue
            for request_id in request_ids:
                subscriber.put("on_permission_resolved", (record.id, request_id, None))
