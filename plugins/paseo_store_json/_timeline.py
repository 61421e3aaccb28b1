"""Agent timelines: ``timelines/{agentId}.jsonl``, one :class:`TimelineEntry` per line.

Files are append-only. An append batch is written into the file on the calling thread (one
``write`` into the page cache, the file kept open between appends: once it returns, a killed
daemon keeps the entries), and a
background task then fsyncs every file appended to since its last round, all in one worker
call, :data:`SYNC_DELAY` later: group commit, so the turn of an agent never waits for the disk
and a burst of appends across agents costs one round of fsyncs. A power cut can lose at most
the appends of that last moment; :meth:`JsonTimelineRepository.sync` waits for the round.
Unlike the other collections a timeline is loaded on first use (timelines can be large and
most are never read after a restart), then cached. A line without its newline is the torn end
of an append that a crash interrupted: open cuts it, and a read ignores it.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from paseo_hookspecs.errors import Conflict, InvalidParams, StorageError
from paseo_hookspecs.records import TimelineEntry, dump_record
from paseo_hookspecs.store import TimelineRepository
from pydantic import ValidationError

from paseo_store_json._core import (
    Core,
    KeyedLocks,
    check_file_id,
    clone,
    describe_validation_error,
)
from paseo_store_json._files import quarantine
from paseo_store_json._load import TIMELINES_DIR

log = logging.getLogger("paseo.store.json")

SYNC_DELAY = 0.05
"""Seconds between an append and the fsync round that forces it (and whatever else was
appended meanwhile) to disk: a short turn's first and last appends share one round, and the
fsync stays out of the moments the agent program and the client are waiting on."""


@dataclass
class _Timeline:
    path: Path
    """Built once: a live agent appends several times a turn."""
    entries: list[TimelineEntry]
    seqs: list[int]
    size: int
    """Bytes of complete, valid lines: appends go right after them."""


def encode_line(entry: TimelineEntry) -> bytes:
    return (
        json.dumps(dump_record(entry), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        + "\n"
    ).encode("utf-8")


class JsonTimelineRepository(TimelineRepository):
    """Per-agent append-only JSON Lines files."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.locks = KeyedLocks()
        self._cache: dict[str, _Timeline] = {}
        self._unsynced: set[Path] = set()
        self._unsynced_directories: set[Path] = set()
        self._appended = 0
        """Appends written so far."""
        self._synced = 0
        """Appends forced to disk so far (a prefix of :attr:`_appended`)."""
        self._synced_event = asyncio.Event()
        self._syncer: asyncio.Task[None] | None = None

    async def _sync_rounds(self) -> None:
        try:
            await asyncio.sleep(SYNC_DELAY)
            while self._unsynced or self._unsynced_directories:
                files, self._unsynced = sorted(self._unsynced), set()
                directories, self._unsynced_directories = sorted(self._unsynced_directories), set()
                target = self._appended
                try:
                    await self.core.io(
                        functools.partial(self.core.ops.sync, files, directories),
                        "syncing timelines",
                    )
                except StorageError:
                    # The entries are in the files (a killed daemon keeps them); only their
                    # survival of a power cut is in doubt, and fsync cannot be retried usefully.
                    log.exception("could not force %d timeline files to disk", len(files))
                self._synced = target
                self._wake_waiters()
        finally:
            self._syncer = None
            self._wake_waiters()  # a cancelled round ends their wait too

    def _wake_waiters(self) -> None:
        self._synced_event.set()
        self._synced_event = asyncio.Event()

    async def sync(self) -> None:
        target = self._appended
        while self._synced < target:
            syncer = self._syncer
            if syncer is None:
                return  # a cancelled round: nothing left that could sync them
            await self._synced_event.wait()

    def path(self, agent_id: str) -> Path:
        return self.core.home / TIMELINES_DIR / f"{agent_id}.jsonl"

    def _read_file(self, agent_id: str) -> _Timeline:
        """Parse a timeline file (blocking). Invalid complete lines are corruption, not a torn
        append: the file is copied to quarantine and rewritten without them."""
        path = self.path(agent_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return _Timeline(path, [], [], 0)
        complete = data[: data.rfind(b"\n") + 1]
        entries: list[TimelineEntry] = []
        problems: list[str] = []
        for number, line in enumerate(complete.splitlines(), start=1):
            try:
                entry = TimelineEntry.model_validate_json(line)
            except ValidationError as exc:
                problems.append(f"line {number}: {describe_validation_error(exc)}")
                continue
            if entry.agentId != agent_id or (entries and entry.seq <= entries[-1].seq):
                problems.append(f"line {number}: wrong agent or seq out of order")
                continue
            entries.append(entry)
        size = len(complete)
        if problems:
            self.core.quarantined.append(
                quarantine(self.core.home, path, "; ".join(problems), copy=True)
            )
            rewritten = b"".join(encode_line(entry) for entry in entries)
            self.core.ops.write_bytes(path, rewritten)
            size = len(rewritten)
        return _Timeline(path, entries, [entry.seq for entry in entries], size)

    async def _load(self, agent_id: str) -> _Timeline:
        """The cached timeline (caller holds the agent's lock)."""
        timeline = self._cache.get(agent_id)
        if timeline is None:
            timeline = await self.core.io(
                lambda: self._read_file(agent_id), f"reading the timeline of {agent_id}"
            )
            self._cache[agent_id] = timeline
        return timeline

    async def append(self, entries: Sequence[TimelineEntry]) -> None:
        if not entries:
            return
        checked: list[TimelineEntry] = []
        lines: list[bytes] = []
        for entry in entries:
            if not isinstance(entry, TimelineEntry):
                raise InvalidParams(f"expected a TimelineEntry, got {type(entry).__name__}")
            try:
                line = encode_line(entry)
                checked.append(TimelineEntry.model_validate_json(line))
            except (ValidationError, ValueError) as exc:
                raise InvalidParams(f"invalid timeline entry: {exc}") from exc
            lines.append(line)
        agent_id = checked[0].agentId
        check_file_id("agent", agent_id)
        if any(entry.agentId != agent_id for entry in checked):
            raise Conflict("a timeline append holds entries of one agent")
        if any(b.seq <= a.seq for a, b in itertools.pairwise(checked)):
            raise Conflict("timeline entries must have strictly increasing seq")
        data = b"".join(lines)
        self.core.check_open()
        timeline = self._cache.get(agent_id)
        if timeline is not None and not self.locks.busy(agent_id):
            # Loaded and nobody else at it: the append does not wait for anything, so it runs
            # here, whole (no task, no lock: a live agent's turn appends several times).
            self._append_now(agent_id, timeline, checked, data)
            return

        async def operation() -> None:
            async with self.locks.hold(agent_id):
                self._append_now(agent_id, await self._load(agent_id), checked, data)

        await self.core.write(operation)

    def _append_now(
        self, agent_id: str, timeline: _Timeline, checked: list[TimelineEntry], data: bytes
    ) -> None:
        """Write ``data`` (the lines of ``checked``) and record them, without awaiting."""
        if timeline.seqs and checked[0].seq <= timeline.seqs[-1]:
            raise Conflict(
                f"seq {checked[0].seq} is not after the last stored seq "
                f"{timeline.seqs[-1]} of agent {agent_id}"
            )
        path = timeline.path
        created = timeline.size == 0 and not path.exists()
        size = self.core.io_now(
            lambda: self.core.ops.append(path, data, timeline.size),
            f"appending to the timeline of {agent_id} ({path})",
        )
        self._unsynced.add(path)
        if created:
            self._unsynced_directories.add(path.parent)
        self._appended += 1
        if self._syncer is None:
            self._syncer = asyncio.get_running_loop().create_task(self._sync_rounds())
        timeline.size = size
        timeline.entries.extend(checked)
        timeline.seqs.extend(entry.seq for entry in checked)

    async def read(
        self,
        agent_id: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int | None = None,
        tail: bool = False,
    ) -> list[TimelineEntry]:
        self.core.check_open()
        check_file_id("agent", agent_id)
        if limit is not None and (isinstance(limit, bool) or limit < 0):
            raise InvalidParams(f"limit must be a non-negative integer, got {limit!r}")
        async with self.locks.hold(agent_id):
            timeline = await self._load(agent_id)
        start = 0 if after_seq is None else bisect.bisect_right(timeline.seqs, after_seq)
        end = (
            len(timeline.seqs)
            if before_seq is None
            else bisect.bisect_left(timeline.seqs, before_seq)
        )
        if limit is not None and end - start > limit:
            if tail:
                start = end - limit
            else:
                end = start + limit
        return [clone(entry) for entry in timeline.entries[start:end]]

    async def last(self, agent_id: str) -> TimelineEntry | None:
        entries = await self.read(agent_id, limit=1, tail=True)
        return entries[0] if entries else None

    async def delete(self, agent_id: str) -> None:
        check_file_id("agent", agent_id)

        async def operation() -> None:
            await self.remove(agent_id)

        await self.core.write(operation)

    async def remove(self, agent_id: str) -> None:
        """Delete the timeline file and cache (inside an already running write)."""
        async with self.locks.hold(agent_id):
            path = self.path(agent_id)
            await self.core.io(
                lambda: self.core.ops.remove(path), f"deleting the timeline of {agent_id} ({path})"
            )
            self._cache.pop(agent_id, None)
