"""Strictly ordered delivery of a session's events to the kernel's sink.

Events go through one queue and one dispatcher task: strict order across the reader, turn and
caller tasks, and a sink that answers a permission from inside its own callback (re-entering the
session) cannot deadlock. A session built on it::

    self._events = OrderedEvents(sink, name="mine-events")
    await self._events.put(TurnStarted(provider=self.provider_id, turnId="1"))
    ...
    await self._events.stop()  # in close(): delivers what is queued, bounded
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from paseo_hookspecs.events import AgentEvent
from paseo_hookspecs.interfaces.agent import EventSink

log = logging.getLogger("paseo_hookspecs.ordered_events")

EVENT_BACKLOG = 256
"""Queued events beyond which producers wait for the sink."""

DRAIN_TIMEOUT = 5.0
"""Seconds :meth:`OrderedEvents.stop` waits for queued events to reach the sink."""


class OrderedEvents:
    """See the module docstring. The dispatcher starts at construction (on the running loop)."""

    def __init__(self, sink: EventSink, *, name: str = "agent-events") -> None:
        self._sink = sink
        self._name = name
        self._queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        self._dispatcher = asyncio.create_task(self._dispatch(), name=name)

    async def put(self, event: AgentEvent) -> None:
        """Queue ``event``; waits for the sink once the backlog is long."""
        self._queue.put_nowait(event)
        if self._queue.qsize() > EVENT_BACKLOG:
            # Back-pressure: a slow sink slows the reader down instead of growing the queue.
            await self.flush()

    async def flush(self) -> None:
        """Wait until every queued event was delivered (not from inside the sink)."""
        if asyncio.current_task() is not self._dispatcher:
            await self._queue.join()

    async def _dispatch(self) -> None:
        while True:
            event = await self._queue.get()
            if event is None:  # the end marker of stop()
                self._queue.task_done()
                return
            try:
                await self._sink(event)
            except Exception:  # a failing sink must not stop the session
                log.exception("%s: delivering a %s event failed", self._name, event.type)
            finally:
                self._queue.task_done()

    async def stop(self) -> None:
        """Deliver what is queued (bounded), then end the dispatcher."""
        self._queue.put_nowait(None)
        if asyncio.current_task() is self._dispatcher:
            return  # closed from inside the sink: the loop ends after this event
        try:
            await asyncio.wait_for(asyncio.shield(self._dispatcher), DRAIN_TIMEOUT)
        except TimeoutError:
            log.warning("%s: events of a closed session were not delivered in time", self._name)
            self._dispatcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._dispatcher


__all__ = ["DRAIN_TIMEOUT", "EVENT_BACKLOG", "OrderedEvents"]
