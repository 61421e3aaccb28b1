"""Usage accounting as append-only day files: ``usage/YYYY-MM-DD.jsonl``, one record a line.

Each :meth:`JsonUsageRepository.add` appends one line and forces it to disk before returning
(usage is written once a turn, not at the pace of a model's output, so one fsync per record is
cheap). A line torn by a crash is the last of its file; loading skips it and the next append
cuts it off. At open, days before :data:`RETENTION_DAYS` are folded into ``usage/rollups.json`` (one
record per day and dimension tuple, see :func:`paseo_hookspecs.usage.roll_up`) under a new
generation number: their files are first renamed ``YYYY-MM-DD.rolling-{generation}``, then the
roll-ups written atomically (the commit point), then the renamed files removed. A crash leaves
renamed files that loading removes (their generation is in the roll-ups) or reads back (it is
not), so no turn is lost or counted twice. The
records are few (a line per turn, a bounded window) and all kept in memory for queries.

A turn's end and its usage are one atomic write (:meth:`JsonUsageRepository.add_around`): the
records are first forced to ``usage/pending.jsonl`` with the timeline entry that ends the turn (an
intent), then the timeline is appended, then (off the turn's path, before the next usage write) the
records go to their day file and the intent is cut off. Open settles intents a crash left
(:meth:`JsonUsageRepository.recover`): a record whose timeline entry is stored is added (idempotent
by id), one whose entry is not is dropped, so a finished turn never lacks its usage and usage never
names a turn that is not there. (A power cut may take the newest timeline lines, written before
their group fsync: an intent settled before that cut keeps its record; see
:mod:`paseo_store_json._timeline`.)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from paseo_hookspecs.atomic import atomic_write_bytes, fsync_directory
from paseo_hookspecs.errors import InvalidParams, StorageError
from paseo_hookspecs.records import TimelineEntry, dump_record
from paseo_hookspecs.usage import (
    USAGE_GROUPS,
    UsageGroup,
    UsageRecord,
    UsageRepository,
    UsageTotals,
    aggregate,
    roll_up,
)
from pydantic import ValidationError

from paseo_store_json._files import encode_json, ensure_directory

log = logging.getLogger("paseo.store.json")

USAGE_DIR = "usage"
ROLLUPS_FILE = "rollups.json"
PENDING_FILE = "pending.jsonl"
"""Usage records whose turn's timeline entry may not be stored yet (intents)."""

RETENTION_DAYS = 90
"""Days whose per-turn records are kept; older days are kept as daily roll-ups."""


def _day_of(at: str) -> str:
    return at[:10]


def cutoff_day(retention_days: int, now: datetime | None = None) -> str:
    """The oldest day whose records stay per turn."""
    moment = now or datetime.now(UTC)
    return (moment - timedelta(days=retention_days)).date().isoformat()


class JsonUsageRepository(UsageRepository):
    """See the module docstring."""

    def __init__(self, home: Path, retention_days: int = RETENTION_DAYS) -> None:
        self.directory = home / USAGE_DIR
        self.retention_days = retention_days
        self.records: dict[str, UsageRecord] = {}
        self._generation = 0
        """The roll-ups' generation: files set aside under a greater one are not in them."""
        self._pending: list[Path] = []
        self._sizes: dict[str, int] = {}
        """Committed byte size of each day file (a torn tail beyond it is cut)."""
        self._lock = asyncio.Lock()
        self._settling: asyncio.Task[None] | None = None
        """Moving the last intent's records to their day files (see :meth:`add_around`)."""

    # ------------------------------------------------------------------ open

    def load(self, *, roll_up: bool = True) -> None:
        """Read the day files and roll-ups, then (with ``roll_up``) roll up days past the
        window (blocking). The store rolls up after :meth:`recover`, so a recovered record of
        an old day is rolled up with its day rather than counted beside its roll-up."""
        self.records.clear()
        self._sizes.clear()
        self._pending.clear()
        self._generation = 0
        if not self.directory.is_dir():
            return
        rollups = self.directory / ROLLUPS_FILE
        if rollups.exists():
            try:
                data = json.loads(rollups.read_bytes())
                self._generation = int(data.get("generation", 0))
                for raw in data.get("records", []):
                    record = UsageRecord.model_validate(raw)
                    self.records[record.id] = record
            except (OSError, ValueError, ValidationError, AttributeError) as exc:
                raise StorageError(f"usage roll-ups {rollups} are unreadable: {exc}") from exc
        for path in sorted(self.directory.glob("*.rolling-*")):
            generation = int(path.name.rsplit("-", 1)[1])
            if generation <= self._generation:
                # Rolled up before a crash left it: the roll-ups hold it already.
                path.unlink(missing_ok=True)
            else:
                # Set aside by a roll-up that never wrote its file: still only here.
                self._load_day(path, path.name[:10], track=False)
                self._pending.append(path)
        for path in sorted(self.directory.glob("????-??-??.jsonl")):
            self._load_day(path, path.stem)
        if roll_up:
            self._roll_up_old()

    def _load_day(self, path: Path, day: str, *, track: bool = True) -> None:
        data = path.read_bytes()
        committed = 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break  # torn by a crash: the next append cuts it
            try:
                record = UsageRecord.model_validate_json(line)
            except ValidationError:
                log.warning("skipping an unreadable usage line in %s", path)
            else:
                self.records[record.id] = record
            committed += len(line)
        if track:
            self._sizes[day] = committed

    def roll_up_old(self) -> None:
        """Roll up the days past the window (blocking)."""
        if self.directory.is_dir():
            self._roll_up_old()

    def _roll_up_old(self) -> None:
        """Fold the days before the window into the roll-ups: each day file is first renamed
        aside under the next generation, then the roll-ups of that generation are written
        (the commit point), then the renamed files removed."""
        cutoff = cutoff_day(self.retention_days)
        old_days = sorted(d for d in self._sizes if d < cutoff)
        if not old_days and not self._pending:
            return
        generation = self._generation + 1
        for day in old_days:
            aside = self.directory / f"{day}.rolling-{generation}"
            os.replace(self.directory / f"{day}.jsonl", aside)
            self._pending.append(aside)
            del self._sizes[day]
        fsync_directory(self.directory)
        old = [r for r in self.records.values() if _day_of(r.at) < cutoff]
        rolled = roll_up(old)
        document = {
            "generation": generation,
            "records": [dump_record(record) for record in rolled],
        }
        atomic_write_bytes(self.directory / ROLLUPS_FILE, encode_json(document))
        for path in self._pending:
            path.unlink(missing_ok=True)
        self._pending.clear()
        fsync_directory(self.directory)
        for record in old:
            del self.records[record.id]
        for record in rolled:
            self.records[record.id] = record
        self._generation = generation

    # ------------------------------------------------------------------ repository

    async def add(self, record: UsageRecord) -> bool:
        stored = self._validated(record)
        async with self._lock:
            await self._settled()
            if stored.id in self.records:
                return False
            line = json.dumps(dump_record(stored), ensure_ascii=False, allow_nan=False)
            day = _day_of(stored.at)
            try:
                await asyncio.to_thread(self._append, day, (line + "\n").encode())
            except OSError as exc:
                raise StorageError(f"could not record usage: {exc}") from exc
            self.records[stored.id] = stored
            return True

    @staticmethod
    def _validated(record: UsageRecord) -> UsageRecord:
        if not isinstance(record, UsageRecord):
            raise InvalidParams(f"expected a UsageRecord, got {type(record).__name__}")
        try:
            return UsageRecord.model_validate(dump_record(record))
        except ValidationError as exc:
            raise InvalidParams(f"invalid usage record: {exc.errors()[0].get('msg')}") from exc

    async def add_around(
        self,
        entry: TimelineEntry,
        records: Sequence[UsageRecord],
        write: Callable[[], Awaitable[None]],
    ) -> None:
        """Add ``records`` atomically with ``write`` (the timeline append ending in ``entry``):
        intent, ``write``, then day files and intent cut off (see the module docstring).

        Only the intent and ``write`` are on the caller's path: once both are done the
        records are durable (a crash leaves the intent, which open settles), so the day-file
        appends and the cut run as a task of their own, which the next write to this
        repository (and :meth:`close`) waits for; the pending file holds one intent at a time.
        """
        stored = [self._validated(record) for record in records]
        async with self._lock:
            await self._settled()
            fresh = [record for record in stored if record.id not in self.records]
            if not fresh:
                await write()
                return
            intent = {
                "agentId": entry.agentId,
                "epoch": entry.epoch,
                "seq": entry.seq,
                "records": [dump_record(record) for record in fresh],
            }
            line = json.dumps(intent, ensure_ascii=False, allow_nan=False) + "\n"
            try:
                await asyncio.to_thread(self._write_pending, line.encode())
            except OSError as exc:
                raise StorageError(f"could not record usage: {exc}") from exc
            try:
                await write()
            except BaseException:
                # Nothing of the turn's end is stored: neither is its usage.
                await asyncio.to_thread(self._write_pending, None)
                raise
            for record in fresh:
                self.records[record.id] = record
            days = [
                (_day_of(r.at), (json.dumps(dump_record(r), ensure_ascii=False) + "\n").encode())
                for r in fresh
            ]
            self._settling = asyncio.get_running_loop().create_task(
                asyncio.to_thread(self._settle, days), name="usage-settle"
            )

    def _settle(self, days: list[tuple[str, bytes]]) -> None:
        """Append an intent's records to their day files, then cut the intent off (blocking).
        A failure leaves the intent, which the next open settles."""
        try:
            for day, data in days:
                self._append(day, data)
            self._write_pending(None)
        except OSError:
            log.exception("could not move usage records to their day files (kept as intent)")

    async def _settled(self) -> None:
        """Wait for the last intent's settling (its day files and cut) to be over."""
        if self._settling is not None:
            # Shielded: a cancelled caller leaves the task set, so the next one still waits.
            await asyncio.shield(self._settling)
            self._settling = None

    async def close(self) -> None:
        """Wait for the records still being settled (the store calls this as it closes)."""
        async with self._lock:
            await self._settled()

    def _write_pending(self, data: bytes | None) -> None:
        """Force ``data`` (one intent) to the pending file, or with ``None`` empty it (no
        fsync: an intent whose records are in their day files settles to nothing)."""
        ensure_directory(self.directory)
        path = self.directory / PENDING_FILE
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            if data is not None:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
        finally:
            os.close(fd)

    def pending(self) -> list[tuple[str, str, int, list[UsageRecord]]]:
        """The intents a crash left: (agent, epoch, seq, records) (blocking)."""
        path = self.directory / PENDING_FILE
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        intents = []
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break  # torn: its timeline append never started
            try:
                raw = json.loads(line)
                records = [UsageRecord.model_validate(r) for r in raw["records"]]
                intents.append((str(raw["agentId"]), str(raw["epoch"]), int(raw["seq"]), records))
            except (ValueError, KeyError, TypeError, ValidationError):
                log.warning("skipping an unreadable usage intent in %s", path)
        return intents

    async def recover(self, stored: Callable[[str, str, int], Awaitable[bool]]) -> int:
        """Settle the intents a crash left: add the records of those whose timeline entry is
        ``stored`` (agent, epoch, seq), drop the others; returns how many were added."""
        added = 0
        for agent_id, epoch, seq, records in await asyncio.to_thread(self.pending):
            if not await stored(agent_id, epoch, seq):
                continue
            for record in records:
                added += await self.add(record)
        if (self.directory / PENDING_FILE).exists():
            await asyncio.to_thread(self._write_pending, None)
        return added

    def _append(self, day: str, data: bytes) -> None:
        ensure_directory(self.directory)
        path = self.directory / f"{day}.jsonl"
        created = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            committed = self._sizes.get(day, os.fstat(fd).st_size)
            os.ftruncate(fd, committed)  # a torn tail of a crashed append goes
            os.lseek(fd, committed, os.SEEK_SET)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError:
                os.ftruncate(fd, committed)
                raise
            self._sizes[day] = committed + len(data)
        finally:
            os.close(fd)
        if created:
            fsync_directory(self.directory)

    async def query(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        agent_id: str | None = None,
        group_by: UsageGroup = "agent",
    ) -> list[UsageTotals]:
        if group_by not in USAGE_GROUPS:
            raise ValueError(f"unknown usage grouping {group_by!r}")
        chosen: list[Any] = [
            record
            for record in self.records.values()
            if (since is None or record.at >= since)
            and (until is None or record.at < until)
            and (agent_id is None or record.agentId == agent_id)
        ]
        return aggregate(chosen, group_by)
