"""The agent index's background work: checking it against the records, keeping its file.

An open loads the agents' index from the durable index file (:mod:`paseo_store_json._index_file`)
and serves at once; :class:`IndexKeeper` then walks every agent record in a worker thread (the
read the open used to do before serving) and settles the index where the two disagree — a
record added, removed or changed behind the store's back, or written by a daemon killed
before its index was. Until then :attr:`RecordFiles.verified` is false: listings that cannot
wait say they are partial, the others wait (see :class:`paseo_store_json._per_record.RecordFiles`).

The file is rewritten (atomically, in a worker thread) after the check, then at most every
:data:`FLUSH_INTERVAL` while writes change the index, and at close. A crash loses at most the
changes since the last rewrite, which the next open's check puts back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from paseo_hookspecs.records import AgentRecord
from paseo_hookspecs.store import QuarantinedFile

from paseo_store_json._bulk import Stopped
from paseo_store_json._index import AgentRow
from paseo_store_json._index_file import read_index, write_index
from paseo_store_json._load import find_agent, scan_agents
from paseo_store_json._per_record import RecordFiles

log = logging.getLogger("paseo.store.json")

FLUSH_INTERVAL = 10.0
"""Seconds between rewrites of the index file while writes change the index."""

HOLD_LIMIT = 30.0
"""Seconds a held check waits for the daemon to say it is serving before it starts anyway."""

RETRY_INTERVAL = 5.0
"""Seconds before a failed check (the agents folder unreadable) is tried again."""


class IndexKeeper:
    """Checks the agents' index after open and keeps the durable index file current.

    Nothing here is bound to one event loop: a check is (re)started in the loop of whoever
    waits for it (tests run the open and the listings under separate ``asyncio.run`` calls)."""

    def __init__(
        self,
        home: Path,
        files: RecordFiles[AgentRecord, AgentRow],
        quarantined: list[QuarantinedFile],
        after_check: Callable[[], Awaitable[None]],
    ) -> None:
        self.home = home
        self.files = files
        self.quarantined = quarantined
        self.after_check = after_check
        """Run on the loop once the index holds every record (interrupted purges it can only
        see now)."""
        self.dirty = False
        self.checks = 0
        """Checks completed (tests look at it)."""
        self.last_disagreements = 0
        self._opened_at = 0.0
        self._file_loaded = False
        self._stop = threading.Event()
        self._check_task: asyncio.Task[None] | None = None
        self._flush_task: asyncio.Task[None] | None = None
        self._held = False
        self._generation = 0
        self._written = 0
        self._write_lock = threading.Lock()

    def start(self, *, indexed: bool, opened_at: float) -> None:
        """Begin the check (``indexed``: the open read the hot rows of a usable file)."""
        files = self.files
        files.finder = lambda agent_id: find_agent(self.home, agent_id)
        files.changed = self._changed
        files.wait_check = self.wait_check
        files.unverify()
        self._opened_at = opened_at
        # No usable file: the check writes one even when there is no record at all.
        self.dirty = not indexed
        self._file_loaded = not indexed
        self._check_task = asyncio.get_running_loop().create_task(
            self._settle(), name="paseo-store-json-index"
        )

    def hold(self) -> None:
        """Start the walk only at :meth:`release` (the daemon is ready): reading every record
        beside the start would slow the start by as much."""
        self._held = True

    def release(self) -> None:
        self._held = False

    def _changed(self) -> None:
        self.dirty = True

    async def wait_check(self) -> None:
        """Wait for the check (starting it in this loop when the one it ran in is gone)."""
        if self._stop.is_set():
            return
        loop = asyncio.get_running_loop()
        task = self._check_task
        if self.files.verified and (task is None or task.done() or task.get_loop() is not loop):
            return
        if task is None or task.get_loop() is not loop or task.cancelled():
            task = self._check_task = loop.create_task(self._settle())
        await asyncio.shield(task)

    async def _sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or less once the store closes."""
        deadline = time.monotonic() + seconds
        # Not an asyncio.Event: it would be bound to one loop (see the class docstring).
        while not self._stop.is_set() and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(min(0.1, seconds))

    async def _settle(self) -> None:
        deadline = time.monotonic() + HOLD_LIMIT
        # Not an asyncio.Event: it would be bound to one loop (see the class docstring).
        while self._held and not self._stop.is_set() and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        if not self._file_loaded:
            # The open read the hot rows only: the rest of the file first (listings stay
            # partial), then the records.
            rows = await asyncio.to_thread(read_index, self.home)
            self._file_loaded = True
            if rows is None:
                self.dirty = True
            else:
                self.files.add_rows(rows)
        while not await self._check():
            await self._sleep(RETRY_INTERVAL)
            if self._stop.is_set():
                return
        if not self._stop.is_set():
            self._flush_task = asyncio.get_running_loop().create_task(self._flush_loop())

    async def _flush_loop(self) -> None:
        while not self._stop.is_set():
            await self._sleep(FLUSH_INTERVAL)
            await self.flush()

    async def _check(self) -> bool:
        """One walk of the records; ``True`` once the index is settled (or the store closes)."""
        files = self.files
        if files.verified:
            return True
        before = dict(files.index.rows)
        stop, opened_at = self._stop, self._opened_at

        def walk() -> dict[str, AgentRow | None]:
            # Quarantined files are listed as they are moved: a walk whose loop ended (its
            # result never used) has still moved them.
            rows = scan_agents(self.home, stop, opened_at, self.quarantined)
            changes: dict[str, AgentRow | None] = {
                row_id: None for row_id in before if row_id not in rows
            }
            for row_id, row in rows.items():
                held = before.get(row_id)
                if held is None or not held.same(row):
                    changes[row_id] = row
            return changes

        started = time.perf_counter()
        try:
            changes = await asyncio.to_thread(walk)
        except Stopped:
            return True
        except OSError as exc:
            log.exception("checking the agent index against the records failed; retrying")
            files.failure = str(exc)
            return False
        if files.verified:
            return True  # another loop's check settled it meanwhile
        files.settle(changes)
        self.checks += 1
        self.last_disagreements = len(changes)
        if changes:
            log.info(
                "agent index checked in %.2f s: %d row(s) disagreed with the records, fixed",
                time.perf_counter() - started,
                len(changes),
            )
        try:
            await self.after_check()
        except Exception:
            log.exception("finishing interrupted purges after the agent index check failed")
        await self.flush()
        return True

    async def flush(self) -> None:
        """Rewrite the index file if the index changed since it was written (only a checked
        index is written: an unchecked one may lack records). Writes may overlap; the newest
        snapshot wins."""
        if not self.dirty or not self.files.verified:
            return
        self.dirty = False
        self._generation += 1
        generation = self._generation
        rows = list(self.files.index.rows.values())

        def write() -> None:
            with self._write_lock:
                if generation > self._written:
                    write_index(self.home, rows)
                    self._written = generation

        try:
            await asyncio.to_thread(write)
        except OSError:
            self.dirty = True
            log.exception("the agent index file could not be written (the next open rebuilds)")

    async def close(self) -> None:
        """Stop the check (a walk in progress stops at its next batch) and write the file."""
        self._stop.set()
        loop = asyncio.get_running_loop()
        for task in (self._check_task, self._flush_task):
            if task is not None and task.get_loop() is loop and not task.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._check_task = self._flush_task = None
        await self.flush()


__all__ = ["FLUSH_INTERVAL", "IndexKeeper"]
