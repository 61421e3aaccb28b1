"""The daemon-wide Git process limiter.

Two limits hold for every Git process the daemon starts (data-model seed, "Git process limits"):

* ``maxProcessesPerSecond``: at most that many process *starts* in any one-second interval. The
  allowance can be spent as a burst and does not wait for earlier processes to exit.
* ``maxProcessConcurrency``: at most that many processes started but not yet exited.

Limits are read through a callable on every acquisition, so ``paseo reload`` applies new values
to the next process without replacing the limiter.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

WINDOW_SECONDS = 1.0


@dataclass(frozen=True)
class GitLimits:
    """The two limits; both positive."""

    max_processes_per_second: int = 64
    max_process_concurrency: int = 8


StartObserver = Callable[[float, int], None]
"""Called at each granted start with (monotonic start time, processes active including it)."""


class GitProcessLimiter:
    """Grants permission to start one Git process; see the module docstring.

    Use ``async with limiter.slot(): ...start and wait for the process...``. Waiters are served
    in arrival order (a condition variable plus a FIFO ticket queue), so a stream of new requests
    cannot starve an old one.
    """

    def __init__(
        self,
        limits: Callable[[], GitLimits] | GitLimits = GitLimits(),
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = limits if callable(limits) else (lambda fixed=limits: fixed)
        self._clock = clock
        self._starts: deque[float] = deque()
        self._active = 0
        self._queue: deque[object] = deque()
        self._changed = asyncio.Condition()
        self.started = 0
        """Processes granted since construction."""
        self.max_active = 0
        """The highest number of simultaneously active processes observed."""
        self.observer: StartObserver | None = None

    @property
    def active(self) -> int:
        """Processes granted and not yet released."""
        return self._active

    def limits(self) -> GitLimits:
        """The limits in force now."""
        return self._limits()

    def _rate_delay(self, now: float, per_second: int) -> float:
        """Seconds until another start fits in the sliding one-second window (0: now)."""
        while self._starts and now - self._starts[0] >= WINDOW_SECONDS:
            self._starts.popleft()
        if len(self._starts) < per_second:
            return 0.0
        # The window holds `per_second` starts; the next may begin one second after the
        # start that will then leave the window.
        return self._starts[-per_second] + WINDOW_SECONDS - now

    async def acquire(self) -> None:
        """Wait until both limits allow one more process, then count it as started."""
        ticket = object()
        async with self._changed:
            self._queue.append(ticket)
            try:
                while True:
                    limits = self._limits()
                    if self._queue[0] is ticket and self._active < limits.max_process_concurrency:
                        now = self._clock()
                        delay = self._rate_delay(now, limits.max_processes_per_second)
                        if delay <= 0:
                            break
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._changed.wait(), delay)
                        continue
                    await self._changed.wait()
            except BaseException:
                self._queue.remove(ticket)
                self._changed.notify_all()
                raise
            self._queue.popleft()
            self._starts.append(now)
            self._active += 1
            self.started += 1
            self.max_active = max(self.max_active, self._active)
            if self.observer is not None:
                self.observer(now, self._active)
            self._changed.notify_all()

    async def release(self) -> None:
        """Count one granted process as exited."""
        async with self._changed:
            self._active -= 1
            self._changed.notify_all()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one process slot for the body of the ``async with``."""
        await self.acquire()
        try:
            yield
        finally:
            # Shielded: a cancelled caller must still give its slot back.
            await asyncio.shield(self.release())
