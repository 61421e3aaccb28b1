"""Agent timelines: ``timelines/{agentId}.jsonl``, one :class:`TimelineEntry` per line.

Files are append-only. An append batch is written into the file on the calling thread (one
``write`` into the page cache, the file kept open between appends: once it returns, a killed
daemon keeps the entries), and a
background task then fsyncs every file appended to since its last round, all in one worker
call, :data:`SYNC_DELAY` later: group commit, so the turn of an agent never waits for the disk
and a burst of appends across agents costs one round of fsyncs. A power cut can lose at most
the appends of that last moment; :meth:`JsonTimelineRepository.sync` waits for the round.
Unlike the other collections a timeline is never loaded: its file is its own index
(:mod:`paseo_store_json._timeline_file`). First use reads the end of the file backward (its size,
its last seq, the newest :data:`OPEN_READ_BYTES` of entries); a page at any seq is found by
binary search over byte offsets (entries are in seq order); so opening a timeline of a million
entries, reading its last page or any page costs milliseconds and no memory per entry. What
stays in memory is bounded in bytes: per touched timeline a few numbers, and the lines of the
newest part of the recently used timelines (appended, or read backward from the end), at most
:data:`CACHE_TIMELINE_BYTES` of them in all (least recently used dropped first); they are parsed
for each read, so a caller never shares an object with the cache. A line without its newline is
the torn end of an append that a crash interrupted (never acknowledged): open cuts it, and a
read ignores it. An invalid line in the middle is set aside the first time a read meets it
(:class:`~paseo_store_json._timeline_file.TimelineFile`).
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

from paseo_store_json._core import Core, KeyedLocks, check_file_id, describe_validation_error
from paseo_store_json._load import TIMELINES_DIR
from paseo_store_json._timeline_file import (
    Found,
    TimelineFile,
    complete_size,
    lines_backward,
)
from paseo_store_json._usage import JsonUsageRepository

log = logging.getLogger("paseo.store.json")

SYNC_DELAY = 0.05
"""Seconds between an append and the fsync round that forces it (and whatever else was
appended meanwhile) to disk: a short turn's first and last appends share one round, and the
fsync stays out of the moments the agent program and the client are waiting on."""


CACHE_TIMELINE_BYTES = 2 * 1024 * 1024
"""Bytes of timeline lines kept in memory, over every timeline. Reads beyond them cost a read
of the lines they return."""

OPEN_READ_BYTES = 64 * 1024
"""Bytes of the newest entries read (into the cache) when a timeline is first used: the last
seq, and the page a client asks for first, in one read."""


@dataclass
class _Timeline:
    path: Path
    """Built once: a live agent appends several times a turn."""
    size: int
    """Bytes of complete lines: appends go right after them."""
    last_seq: int | None
    """The seq of the newest valid entry (``None`` for an empty timeline)."""
    cache_start: int
    """Where the cached suffix of the file starts (:attr:`size` when nothing is cached)."""
    cached_lines: list[bytes] = field(default_factory=list)
    """The lines (without newline) of the valid entries from :attr:`cache_start` to the end."""
    cached_seqs: array[int] = field(default_factory=lambda: array("q"))
    cached_offsets: array[int] = field(default_factory=lambda: array("q"))
    reported: set[int] = field(default_factory=set)
    """Offsets of the invalid lines already reported by this process."""

    @property
    def cached_bytes(self) -> int:
        return self.size - self.cache_start

    def drop_oldest(self, count: int) -> None:
        """Forget the ``count`` oldest cached entries."""
        del self.cached_lines[:count], self.cached_seqs[:count], self.cached_offsets[:count]
        self.cache_start = self.cached_offsets[0] if self.cached_offsets else self.size


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

    def _file(self, agent_id: str, timeline: _Timeline) -> TimelineFile:
        return TimelineFile(
            timeline.path, agent_id, self.core.home, timeline.reported, self.core.quarantined
        )

    def _open_file(self, agent_id: str) -> _Timeline:
        """A timeline's state from the end of its file (blocking): its size, its last seq and,
        parsed on the way, the newest :data:`OPEN_READ_BYTES` of its entries for the cache."""
        path = self.path(agent_id)
        timeline = _Timeline(path, 0, None, 0)
        try:
            reader = self._file(agent_id, timeline)
            with reader:
                size = complete_size(reader.fd, os.fstat(reader.fd).st_size)
                timeline.size = timeline.cache_start = size
                newest: list[Found] = []
                for offset, line in lines_backward(reader.fd, 0, size):
                    entry = reader.parse(offset, line)
                    if entry is None:
                        continue
                    if newest and entry.seq >= newest[-1][2].seq:
                        continue  # out of order: the scans skip (and report) it
                    newest.append((offset, line, entry))
                    if size - offset >= OPEN_READ_BYTES:
                        break
        except FileNotFoundError:
            return timeline
        if newest:
            timeline.last_seq = newest[0][2].seq
            self._prepend(timeline, size, newest[::-1])
        return timeline

    @staticmethod
    def _prepend(timeline: _Timeline, end: int, found: list[Found]) -> None:
        """Cache ``found`` (oldest first), the valid entries of the bytes from the first one's
        offset to ``end``, when they join the cached suffix."""
        if not found or end != timeline.cache_start:
            return
        timeline.cached_lines[:0] = [line for _offset, line, _entry in found]
        timeline.cached_seqs[:0] = array("q", (entry.seq for _offset, _line, entry in found))
        timeline.cached_offsets[:0] = array("q", (offset for offset, _line, _entry in found))
        timeline.cache_start = found[0][0]

    async def _load(self, agent_id: str) -> _Timeline:
        """The timeline's state, read from the end of its file on first use (caller holds the
        agent's lock)."""
        timeline = self._cache.get(agent_id)
        if timeline is not None:
            return timeline
        loaded = await self.core.io(
            lambda: self._open_file(agent_id), f"reading the timeline of {agent_id}"
        )
        self._cache[agent_id] = loaded
        self.cached_bytes += loaded.cached_bytes
        self._used(agent_id)
        return loaded

    def _used(self, agent_id: str) -> None:
        """``agent_id`` was just read or appended to: it is the last its cached entries to be
        dropped; then drop what exceeds the bound (the oldest timelines' entries whole, and of
        the one just used its oldest entries)."""
        self._resident[agent_id] = None
        self._resident.move_to_end(agent_id)
        while self.cached_bytes > self._cache_bytes and self._resident:
            victim_id = next(iter(self._resident))
            victim = self._cache[victim_id]
            if victim_id != agent_id:
                self.cached_bytes -= victim.cached_bytes
                victim.drop_oldest(len(victim.cached_lines))
                del self._resident[victim_id]
                continue
            # The one just used alone exceeds the bound: keep its newest entries that fit.
            keep_from = bisect.bisect_left(
                victim.cached_offsets, victim.cache_start + self.cached_bytes - self._cache_bytes
            )
            before = victim.cached_bytes
            victim.drop_oldest(keep_from)
            self.cached_bytes -= before - victim.cached_bytes
            if not victim.cached_lines:
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
        self.core.check_open()
        timeline = self._cache.get(agent_id)
        if timeline is not None and not self.locks.busy(agent_id):
            # Loaded and nobody else at it: the append does not wait for anything, so it runs
            # here, whole (no task, no lock: a live agent's turn appends several times).
            self._append_now(agent_id, timeline, checked, lines, data)
            return

        async def operation() -> None:
            async with self.locks.hold(agent_id):
                self._append_now(agent_id, await self._load(agent_id), checked, lines, data)

        await self.core.write(operation)

    def _append_now(
        self,
        agent_id: str,
        timeline: _Timeline,
        checked: list[TimelineEntry],
        lines: list[bytes],
        data: bytes,
    ) -> None:
        """Write ``data`` (the ``lines`` of ``checked`` joined) and record them, without
        awaiting."""
        if timeline.last_seq is not None and checked[0].seq <= timeline.last_seq:
            raise Conflict(
                f"seq {checked[0].seq} is not after the last stored seq "
                f"{timeline.last_seq} of agent {agent_id}"
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
        # The cached entries are the newest: these follow them (or start them, when none are).
        position = timeline.size
        for entry, line in zip(checked, lines, strict=True):
            timeline.cached_offsets.append(position)
            timeline.cached_seqs.append(entry.seq)
            timeline.cached_lines.append(line[:-1])
            position += len(line)
        timeline.size = size
        timeline.last_seq = checked[-1].seq
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
            lines = _from_cache(timeline, after_seq, before_seq, limit, tail)
            if lines is None:
                return await self._from_file(
                    agent_id, timeline, after_seq, before_seq, limit, tail=tail
                )
            self._used(agent_id)
        return _parsed(agent_id, lines)

    async def _from_file(
        self,
        agent_id: str,
        timeline: _Timeline,
        after: int | None,
        before: int | None,
        limit: int | None,
        *,
        tail: bool,
    ) -> list[TimelineEntry]:
        """A read the cache cannot answer, from the file (caller holds the lock).
        A tail read takes what the cache has of its newest entries and reads on backward from
        where the cache starts, and the lines it reads join the cache (the next page back will
        start there); any other read finds its first line by binary search on seq."""
        seqs = timeline.cached_seqs
        top: list[bytes] = []
        end = timeline.size
        if tail and seqs and (before is None or before > seqs[0]):
            # The cache holds the newest part of the answer (_from_cache saw it is not all).
            top = timeline.cached_lines[
                0 : len(seqs) if before is None else bisect.bisect_left(seqs, before)
            ]
            end = timeline.cache_start
        need = None if limit is None else limit - len(top)
        size, last_seq = timeline.size, timeline.last_seq

        scanned_to = [end]
        """Where the backward scan started: its lines join the cache only if that is where the
        cache starts."""

        def scan() -> list[Found]:
            with self._file(agent_id, timeline) as reader:
                if not tail:
                    start = 0 if after is None else reader.seek(size, after + 1, last_seq)
                    return reader.forward(start, size, before, limit)
                if not top and before is not None:
                    scanned_to[0] = reader.seek(size, before, last_seq)
                return reader.backward(scanned_to[0], after, need)[::-1]

        try:
            found = await self.core.io(scan, f"reading the timeline of {agent_id}")
        except StorageError as exc:
            if isinstance(exc.__cause__, FileNotFoundError):
                return []
            raise
        if tail and found and scanned_to[0] - found[0][0] <= self._cache_bytes:
            before_bytes = timeline.cached_bytes
            self._prepend(timeline, scanned_to[0], found)
            self.cached_bytes += timeline.cached_bytes - before_bytes
        self._used(agent_id)
        # The entries parsed by the scan are the caller's (the cache keeps their lines).
        return [entry for _offset, _line, entry in found] + _parsed(agent_id, top)

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


def _parsed(agent_id: str, lines: list[bytes]) -> list[TimelineEntry]:
    try:
        return [TimelineEntry.model_validate_json(line) for line in lines]
    except ValidationError as exc:
        raise StorageError(
            f"the timeline of {agent_id} changed in memory: {describe_validation_error(exc)}"
        ) from exc


def _from_cache(
    timeline: _Timeline,
    after: int | None,
    before: int | None,
    limit: int | None,
    tail: bool,
) -> list[bytes] | None:
    """The lines of a read when the cached suffix answers it whole; ``None`` when it does not.
    The cache answers when no entry before it can be part of the answer: ``after`` is at or past
    the seq just before the cached ones, or a tail read finds its ``limit`` entries in it."""
    if limit == 0 or timeline.last_seq is None:
        return []
    if after is not None and after >= timeline.last_seq:
        return []
    seqs = timeline.cached_seqs
    if not seqs:
        return None
    start = 0 if after is None else bisect.bisect_right(seqs, after)
    end = len(seqs) if before is None else bisect.bisect_left(seqs, before)
    if after is not None and after >= seqs[0] - 1:
        if limit is not None and end - start > limit:
            start, end = (end - limit, end) if tail else (start, start + limit)
        return timeline.cached_lines[start:end] if start < end else []
    if tail and limit is not None and end - start >= limit:
        return timeline.cached_lines[end - limit : end]
    return None
