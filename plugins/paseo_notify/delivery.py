"""One sink's queue, worker and counters.

:meth:`SinkWorker.offer` never waits: a full queue drops the notification and counts it, so a
sink that is slow or down costs the agents nothing. The worker delivers one notification at a
time, retrying a failed attempt after ``backoff`` seconds, doubled each time; a notification
that fails every attempt is counted as failed and the worker goes on with the next.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from paseo_notify.transports import DeliveryError

log = logging.getLogger("paseo.plugins.notify")

Deliver = Callable[[dict[str, Any]], Awaitable[None]]

MAX_BACKOFF = 300.0


@dataclass
class SinkCounters:
    sent: int = 0
    failed: int = 0
    """Notifications given up on after every attempt failed."""
    dropped: int = 0
    """Notifications refused because the queue was full."""
    retried: int = 0
    lastError: str | None = None
    lastErrorAt: str | None = None
    lastSentAt: str | None = None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class SinkWorker:
    name: str
    type: str
    events: frozenset[str]
    deliver: Deliver
    retries: int
    backoff: float
    queue_size: int
    disabled: str | None = None
    """Why the sink does not deliver at all (e.g. its secret file may be read by others)."""
    counters: SinkCounters = field(default_factory=SinkCounters)
    _queue: asyncio.Queue[dict[str, Any]] | None = None
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.disabled is not None:
            return
        self._queue = asyncio.Queue(self.queue_size)
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"notify:{self.name}")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def wants(self, event: str) -> bool:
        return self.disabled is None and event in self.events

    def offer(self, payload: dict[str, Any]) -> None:
        if self._queue is None:
            return
        try:
            self._queue.put_nowait(payload)
        except asyncio.QueueFull:
            self.counters.dropped += 1
            log.warning("notify sink %s: queue full, a notification was dropped", self.name)

    @property
    def queued(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    async def _run(self) -> None:
        assert self._queue is not None
        while True:
            payload = await self._queue.get()
            await self._deliver(payload)

    async def _deliver(self, payload: dict[str, Any]) -> None:
        delay = self.backoff
        for attempt in range(self.retries + 1):
            try:
                await self.deliver(payload)
            except DeliveryError as error:
                self._failed_attempt(str(error))
            except Exception as error:  # a bug in a sink must not end its worker
                log.exception("notify sink %s failed unexpectedly", self.name)
                self._failed_attempt(f"{type(error).__name__}: {error}")
            else:
                self.counters.sent += 1
                self.counters.lastSentAt = _now()
                return
            if attempt < self.retries:
                self.counters.retried += 1
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF)
        self.counters.failed += 1
        log.warning(
            "notify sink %s: gave up on a %s notification: %s",
            self.name,
            payload.get("event"),
            self.counters.lastError,
        )

    def _failed_attempt(self, message: str) -> None:
        self.counters.lastError = message
        self.counters.lastErrorAt = _now()

    def status(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "events": sorted(self.events),
            "disabled": self.disabled,
            "queued": self.queued,
            **self.counters.__dict__,
        }
