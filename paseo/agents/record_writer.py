"""Write-behind of one agent's record: memory first, then the store in order, then publish.

The manager applies a change to the agent's in-memory record at once, so waits and reads see
the new state without a disk round trip, and stages the changed fields here. One writer task
per agent persists whatever is staged, merged into one store update per round, strictly in
order. Only a record the store has made durable is handed to ``on_saved`` (which publishes
``agent.updated``), so that notification never shows a state a crash could take back; a caller
that acknowledges a write to a client awaits :meth:`RecordWriter.flush` first.

Changes the manager derives from timeline entries (status, attention, activity) are staged
without urgency: the entries they come from are durable already, so the record is a cache of
facts on disk and its write waits :data:`DEFER` seconds. That keeps the write (a file, an
fsync, a rename and a directory fsync) out of the moment a turn ends, when the waiting client
is being answered, and merges the changes of a short turn into one write.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from paseo_hookspecs.errors import NotFound
from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.store import AgentRepository

log = logging.getLogger("paseo.agents.record")

DEFER = 0.05
"""Seconds a non-urgent change waits before it is written (more changes join it meanwhile)."""


def _retrieve(future: asyncio.Future[None]) -> None:
    # A write-behind round nobody awaits must not log "exception was never retrieved": the
    # writer has logged the failure already.
    if not future.cancelled():
        future.exception()


class RecordWriter:
    """See the module docstring."""

    def __init__(
        self,
        agent_id: str,
        repository: AgentRepository,
        on_saved: Callable[[AgentRecord], None],
    ) -> None:
        self.agent_id = agent_id
        self._repository = repository
        self._on_saved = on_saved
        self._staged: dict[str, Any] = {}
        self._next: asyncio.Future[None] | None = None
        """Resolves when the staged changes are durable."""
        self._current: asyncio.Future[None] | None = None
        """Resolves when the round being written is durable."""
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def stage(self, changes: dict[str, Any], *, urgent: bool = True) -> None:
        """Queue top-level field ``changes`` (JSON-ready) for the next write round, which
        starts now when ``urgent`` and after :data:`DEFER` seconds otherwise."""
        self._staged.update(changes)
        loop = asyncio.get_running_loop()
        if self._next is None:
            self._next = loop.create_future()
            self._next.add_done_callback(_retrieve)
        if urgent:
            self._start()
        elif self._task is None and self._timer is None:
            self._timer = loop.call_later(DEFER, self._start)

    @property
    def idle(self) -> bool:
        """Nothing staged or being written."""
        return self._next is None and self._current is None and self._task is None

    async def flush(self) -> None:
        """Return once everything staged so far is durable; raises the store's error."""
        if self._next is not None:
            self._start()
        for future in (self._current, self._next):
            if future is not None:
                await asyncio.shield(future)

    def _start(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        try:
            while self._staged:
                changes, self._staged = self._staged, {}
                self._current, self._next = self._next, None
                done = self._current
                assert done is not None
                try:
                    record = await self._repository.update(self.agent_id, changes)
                except asyncio.CancelledError:
                    done.cancel()
                    raise
                except NotFound:
                    done.set_result(None)  # deleted meanwhile: nothing left to keep
                except Exception as exc:
                    log.exception("could not save agent %s", self.agent_id)
                    done.set_exception(exc)
                else:
                    self._on_saved(record)
                    done.set_result(None)
                finally:
                    self._current = None
        finally:
            self._task = None
            if self._next is not None:
                # Only reached when the task was cancelled (the daemon is going down): a
                # waiter must not wait forever for a round that will not run.
                self._next.cancel()
                self._next = None
                self._staged = {}
