"""Wall time for the scheduler, injectable so tests can move it.

Schedules are wall-clock things (a cron slot is a civil time), so the scheduler reads
:meth:`Clock.now` rather than the monotonic clock. Sleeps are capped (:data:`MAX_SLEEP`): an
asyncio sleep runs on the monotonic clock, so after the wall clock jumps (NTP, a suspended
laptop, a manual change) the scheduler notices within one cap and re-computes from the new
wall time instead of sleeping through slots or firing early.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from typing import Protocol

MAX_SLEEP = 60.0
"""Longest single sleep in seconds: the bound on noticing a wall-clock jump (and so the idle
scheduler's wake-ups: at most one a minute)."""


class Clock(Protocol):
    """Wall time and a sleep that a change can cut short."""

    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""

    async def sleep_until(self, deadline: datetime | None, wake: asyncio.Event) -> None:
        """Return at ``deadline`` (``None``: no deadline), when ``wake`` is set, or earlier
        (callers re-check the time; returning early is always allowed)."""


class SystemClock:
    """The real clock; sleeps at most :data:`MAX_SLEEP` at a time."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, deadline: datetime | None, wake: asyncio.Event) -> None:
        delay = MAX_SLEEP
        if deadline is not None:
            delay = min(delay, max(0.0, (deadline - self.now()).total_seconds()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), delay)


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and ``Z``, the form TypeScript Paseo writes."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """A stored timestamp as an aware UTC datetime (a naive one is read as UTC)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
