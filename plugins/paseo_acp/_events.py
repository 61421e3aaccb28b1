"""Strictly ordered delivery of a session's events to the kernel's sink.

Events go through one queue and one dispatcher task: strict order across the reader, turn and
caller tasks, and a sink that answers a permission from inside its own callback (re-entering the
session) cannot deadlock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from paseo_hookspecs.events import AgentEvent
from paseo_hookspecs.interfaces.agent import EventSink

log = logging.getLogger("paseo_acp.session")

EVENT_BACKLOG = 256
"""Queued events beyond which producers wait for the sink."""

DRAIN_TIMEOUT = 5.0
"""Seconds :meth:`OrderedEvents.stop` waits for queued events to reach the sink."""


class OrderedEvents:
    """See the module docstring. The dispatcher starts at construction (on the running loop)."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink
        self._queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        self._dispatcher = asyncio.create_task(self._dispatch(), name="acp-events")

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
                log.exception("delivering a %s event failed", event.type)
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
            log.warning("events of a closed ACP session were not delivered in time")
            self._dispatcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._dispatcher
