"""Agent timelines: ``timelines/{agentId}.jsonl``, one :class:`TimelineEntry` per line.

Files are append-only. An append batch is written into the file on the calling thread (one
``write`` into the page cache, the file kept open between appends: once it returns, a killed
daemon keeps the entries), and a
background task then fsyncs every file appended to since its last round, all in one worker
call, :data:`SYNC_DELAY` later: group commit, so the turn of an agent never waits for the disk
and a burst of appends across agents costs one round of fsyncs. A power cut can lose at most
the appends of that last moment; :meth:`JsonTimelineRepository.sync` waits for the round.
Unlike the other collections a timeline is loaded on first use (timelines can be large and
most are never read after a restart). What stays in memory is bounded: per touched timeline
only its index (each entry's seq and byte offset, 16 bytes an entry), and parsed entries for the
newest part of the recently used timelines, at most :data:`CACHE_TIMELINE_BYTES` of their lines
in all (least recently used dropped first). A read the cached entries cannot answer parses just
the lines it asks for, found by their offsets. A line without its newline is the torn end of an
append that a crash interrupted: open cuts it, and a read ignores it.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import itertools
import json
import logging
import os
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paseo_hookspecs.errors import Conflict, InvalidParams, StorageError
from paseo_hookspecs.records import TimelineEntry, dump_record
from paseo_hookspecs.store import TimelineRepository
from paseo_hookspecs.usage import UsageRecord
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
from paseo_store_json._usage import JsonUsageRepository

log = logging.getLogger("paseo.store.json")

SYNC_DELAY = 0.05
"""Seconds between an append and the fsync round that forces it (and whatever else was
appended meanwhile) to disk: a short turn's first and last appends share one round, and the
fsync stays out of the moments the agent program and the client are waiting on."""


CACHE_TIMELINE_BYTES = 2 * 1024 * 1024
"""Bytes of timeline lines kept parsed in memory, over every timeline (a parsed entry takes
several times its line). Reads beyond them cost a read of the lines they return."""


@dataclass
class _Timeline:
    path: Path
    """Built once: a live agent appends several times a turn."""
    seqs: array[int]
    """The seq of every stored entry, in order."""
    offsets: array[int]
    """Where each entry's line starts in the file (it ends where the next starts, the last at
    :attr:`size`)."""
    size: int
    """Bytes of complete, valid lines: appends go right after them."""
    cached: list[TimelineEntry] = field(default_factory=list)
    """The newest ``len(cached)`` entries, parsed (a suffix of the timeline)."""

    def line_bytes(self, start: int, end: int) -> int:
        """Bytes of the lines of entries ``start`` to ``end`` (exclusive)."""
        if start >= end:
            return 0
        stop = self.offsets[end] if end < len(self.offsets) else self.size
        return stop - self.offsets[start]

    @property
    def cached_bytes(self) -> int:
        count = len(self.seqs)
        return self.line_bytes(count - len(self.cached), count)


def encode_line(entry: TimelineEntry) -> bytes:
    return (
        json.dumps(dump_record(entry), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        + "\n"
    ).encode("utf-8")


class JsonTimelineRepository(TimelineRepository):
    """Per-agent append-only JSON Lines files."""

    def __init__(self, core: Core, cache_bytes: int = CACHE_TIMELINE_BYTES) -> None:
        self.core = core
        self.locks = KeyedLocks()
        self._cache: dict[str, _Timeline] = {}
        """Every timeline touched since open (its index; its entries only while resident)."""
        self._cache_bytes = cache_bytes
        self._resident: OrderedDict[str, None] = OrderedDict()
        """Timelines holding parsed entries, least recently used first."""
        self.cached_bytes = 0
        """Bytes of the lines of every parsed entry held (at most ``cache_bytes``)."""
        self._unsynced: set[Path] = set()
        self._unsynced_directories: set[Path] = set()
        self._appended = 0
        """Appends written so far."""
        self._synced = 0
        """Appends forced to disk so far (a prefix of :attr:`_appended`)."""
        self._synced_event = asyncio.Event()
        self._syncer: asyncio.Task[None] | None = None
        self.usage: JsonUsageRepository | None = None
        """Where the usage of the turns appended entries end goes (the store sets it)."""

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

    def _read_file(self, agent_id: str) -> tuple[_Timeline, list[TimelineEntry]]:
        """Parse a timeline file (blocking): its index and every entry. Invalid complete lines
        are corruption, not a torn append: the file is copied to quarantine and rewritten
        without them."""
        path = self.path(agent_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return _Timeline(path, array("q"), array("q"), 0), []
        complete = data[: data.rfind(b"\n") + 1]
        entries: list[TimelineEntry] = []
        offsets = array("q")
        problems: list[str] = []
        position = 0
        for number, line in enumerate(complete.split(b"\n")[:-1], start=1):
            start, position = position, position + len(line) + 1
            try:
                entry = TimelineEntry.model_validate_json(line)
            except ValidationError as exc:
                problems.append(f"line {number}: {describe_validation_error(exc)}")
                continue
            if entry.agentId != agent_id or (entries and entry.seq <= entries[-1].seq):
                problems.append(f"line {number}: wrong agent or seq out of order")
                continue
            entries.append(entry)
            offsets.append(start)
        size = len(complete)
        if problems:
            self.core.quarantined.append(
                quarantine(self.core.home, path, "; ".join(problems), copy=True)
            )
            lines = [encode_line(entry) for entry in entries]
            offsets = array(
                "q", itertools.accumulate((len(line) for line in lines[:-1]), initial=0)
            )
            if not lines:
                offsets = array("q")
            rewritten = b"".join(lines)
            self.core.ops.write_bytes(path, rewritten)
            size = len(rewritten)
        seqs = array("q", (entry.seq for entry in entries))
        return _Timeline(path, seqs, offsets, size), entries

    async def _load(self, agent_id: str) -> _Timeline:
        """The timeline's index, read on first use (caller holds the agent's lock)."""
        timeline = self._cache.get(agent_id)
        if timeline is not None:
            return timeline
        loaded, entries = await self.core.io(
            lambda: self._read_file(agent_id), f"reading the timeline of {agent_id}"
        )
        self._cache[agent_id] = loaded
        loaded.cached = entries
        self.cached_bytes += loaded.cached_bytes
        self._used(agent_id)
        return loaded

    def _used(self, agent_id: str) -> None:
        """``agent_id`` was just read or appended to: it is the last its parsed entries to be
        dropped; then drop what exceeds the bound (the oldest timelines' entries whole, and of
        the one just used its oldest entries)."""
        self._resident[agent_id] = None
        self._resident.move_to_end(agent_id)
        while self.cached_bytes > self._cache_bytes and self._resident:
            victim_id = next(iter(self._resident))
            victim = self._cache[victim_id]
            count = len(victim.seqs)
            if victim_id != agent_id:
                self.cached_bytes -= victim.cached_bytes
                victim.cached = []
                del self._resident[victim_id]
                continue
            # The one just used alone exceeds the bound: keep its newest entries that fit.
            first = count - len(victim.cached)
            keep_from = first
            excess = self.cached_bytes - self._cache_bytes
            while keep_from < count and victim.line_bytes(first, keep_from) < excess:
                keep_from += 1
            self.cached_bytes -= victim.line_bytes(first, keep_from)
            del victim.cached[: keep_from - first]
            if not victim.cached:
                del self._resident[victim_id]

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
        lengths = [len(line) for line in lines]
        self.core.check_open()
        timeline = self._cache.get(agent_id)
        if timeline is not None and not self.locks.busy(agent_id):
            # Loaded and nobody else at it: the append does not wait for anything, so it runs
            # here, whole (no task, no lock: a live agent's turn appends several times).
            self._append_now(agent_id, timeline, checked, data, lengths)
            return

        async def operation() -> None:
            async with self.locks.hold(agent_id):
                self._append_now(agent_id, await self._load(agent_id), checked, data, lengths)

        await self.core.write(operation)

    def _append_now(
        self,
        agent_id: str,
        timeline: _Timeline,
        checked: list[TimelineEntry],
        data: bytes,
        lengths: list[int],
    ) -> None:
        """Write ``data`` (the lines of ``checked``, ``lengths`` bytes each) and record them,
        without awaiting."""
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
        position = timeline.size
        for entry, length in zip(checked, lengths, strict=True):
            timeline.offsets.append(position)
            timeline.seqs.append(entry.seq)
            position += length
        timeline.size = size
        # The cached entries are the newest: these follow them (or start them, when none are).
        timeline.cached.extend(checked)
        self.cached_bytes += len(data)
        self._used(agent_id)

    async def append_with_usage(
        self, entries: Sequence[TimelineEntry], usage: Sequence[UsageRecord]
    ) -> None:
        if not entries:
            return
        if not usage:
            await self.append(entries)
            return
        if self.usage is None:
            raise NotImplementedError
        last = entries[-1]
        if not isinstance(last, TimelineEntry):
            raise InvalidParams(f"expected a TimelineEntry, got {type(last).__name__}")
        await self.usage.add_around(last, usage, lambda: self.append(entries))

    async def stored(self, agent_id: str, epoch: str, seq: int) -> bool:
        """Whether the timeline of ``agent_id`` holds entry ``seq`` of ``epoch``."""
        try:
            check_file_id("agent", agent_id)
        except InvalidParams:
            return False
        found = await self.read(agent_id, after_seq=seq - 1, before_seq=seq + 1)
        return any(entry.seq == seq and entry.epoch == epoch for entry in found)

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
            if start >= end:
                return []
            first_cached = len(timeline.seqs) - len(timeline.cached)
            if start >= first_cached:
                self._used(agent_id)
                return [
                    clone(entry)
                    for entry in timeline.cached[start - first_cached : end - first_cached]
                ]
            span = (timeline.offsets[start], timeline.line_bytes(start, end))
            data = await self.core.io(
                lambda: _read_span(timeline.path, *span), f"reading the timeline of {agent_id}"
            )
        try:
            return [TimelineEntry.model_validate_json(line) for line in data.split(b"\n")[:-1]]
        except ValidationError as exc:
            raise StorageError(
                f"the timeline of {agent_id} changed on disk under the store: "
                f"{describe_validation_error(exc)}"
            ) from exc

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
            timeline = self._cache.pop(agent_id, None)
            if timeline is not None:
                self.cached_bytes -= timeline.cached_bytes
            self._resident.pop(agent_id, None)


def _read_span(path: Path, start: int, length: int) -> bytes:
    """``length`` bytes of ``path`` from ``start`` (blocking); fewer only if it shrank."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks: list[bytes] = []
        while length > 0:
            chunk = os.pread(fd, length, start)
            if not chunk:
                break
            chunks.append(chunk)
            start += len(chunk)
            length -= len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)
