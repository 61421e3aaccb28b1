"""One agent's timeline: numbering, text coalescing, batched durable appends, then fan-out.

Events (the typed models of :mod:`paseo_hookspecs.events`) enter :meth:`AgentTimeline.add` in
the order the provider emitted them; each is serialised once, when its entry is made. Consecutive
text chunks of one message (``assistant_message`` or ``reasoning`` items sharing a
``messageId``) are merged for up to :data:`COALESCE_WINDOW` seconds, so a fast stream becomes a
few entries rather than thousands; any other event flushes the pending text first, so order is
kept and the end of a turn is never delayed. Each entry then gets the next ``seq`` of the
timeline's ``epoch`` and is appended to the store by one writer task per agent, batching
whatever accumulated during the previous append (one fsync per batch). Only after an entry is
durable does the ``commit`` callback see it, with the typed event it holds (to apply its effects
and publish it), so a client never sees a sequence number that a crash could take back.

Secrets are redacted (``daemon.redaction``, :mod:`paseo.redaction`) when an entry is made, after
text is merged: a key streamed in two chunks of one message is whole by then.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import NamedTuple

from paseo_hookspecs.events import AgentEvent, AssistantMessageItem, ReasoningItem, Timeline
from paseo_hookspecs.records import TimelineEntry
from paseo_hookspecs.store import TimelineRepository
from paseo_hookspecs.usage import UsageRecord

from paseo.agents.tracker import iso_now
from paseo.redaction import Redactor
from paseo.redaction.events import redact_event

log = logging.getLogger("paseo.agents.timeline")

COALESCE_WINDOW = 0.06
"""Seconds text chunks of one message are merged before they are numbered and published."""

COALESCE_LIMIT = 64 * 1024
"""Characters after which merged text is flushed regardless of the window."""


class Committed(NamedTuple):
    """A durable entry and the event it was made from."""

    entry: TimelineEntry
    event: AgentEvent
    usage: UsageRecord | None = None
    """The usage record of the turn this entry ended, written with it (atomically)."""


Commit = Callable[[list[Committed]], Awaitable[None]]

UsageOf = Callable[[TimelineEntry, AgentEvent], Awaitable[UsageRecord | None]]
"""The usage record of the turn an entry ends (``None``: it ends none, or none is kept)."""


def new_epoch() -> str:
    """A fresh timeline epoch."""
    return uuid.uuid4().hex[:16]


def _text_key(event: AgentEvent) -> tuple[str, str] | None:
    if not isinstance(event, Timeline):
        return None
    item = event.item
    if not isinstance(item, AssistantMessageItem | ReasoningItem) or item.messageId is None:
        return None
    return item.type, item.messageId


def _merged(event: Timeline, chunks: list[str]) -> Timeline:
    """The first chunk's event carrying the text of every chunk."""
    if len(chunks) == 1:
        return event
    item = event.item.model_copy(update={"text": "".join(chunks)})
    return event.model_copy(update={"item": item})


class AgentTimeline:
    """See the module docstring."""

    def __init__(
        self,
        agent_id: str,
        repository: TimelineRepository,
        commit: Commit,
        *,
        redactor: Redactor | None = None,
        usage_of: UsageOf | None = None,
    ) -> None:
        self.agent_id = agent_id
        self._usage_of = usage_of
        """Usage records to write in the same atomic write as the entries ending turns."""
        self._redactor = redactor
        self._repository = repository
        self._commit = commit
        self.epoch: str | None = None
        self.seq = 0
        """The last sequence number assigned."""
        self._load_lock = asyncio.Lock()
        self._loaded = False
        self._pending: list[Committed] = []
        self._buffer: Timeline | None = None
        self._chunks: list[str] = []
        self._chunks_size = 0
        self._buffer_key: tuple[str, str] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None
        self._busy: asyncio.Event | None = None
        """Set when the writer in flight ends; ``None`` while none is (an Event per idle
        agent would cost every stored agent a deque)."""
        self._committed = 0
        """The last sequence number committed (durable, then published)."""
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    async def load(self) -> None:
        """Continue after the newest stored entry (same epoch, next seq)."""
        if self._loaded:
            return
        async with self._load_lock:
            if self._loaded:
                return
            last = await self._repository.last(self.agent_id)
            if last is not None:
                self.epoch, self.seq = last.epoch, last.seq
                self._committed = last.seq
            else:
                self.epoch, self.seq = new_epoch(), 0
            self._loaded = True

    async def add(self, event: AgentEvent) -> int | None:
        """Take one event; returns its sequence number, or ``None`` when it is text held for
        merging."""
        await self.load()
        key = _text_key(event)
        if key is not None and isinstance(event, Timeline):
            if self._buffer is not None and key == self._buffer_key:
                self._add_chunk(event)
                if self._chunks_size >= COALESCE_LIMIT:
                    self.flush_text()
                return None
            self.flush_text()
            self._buffer = event
            self._add_chunk(event)
            self._buffer_key = key
            self._timer = asyncio.get_running_loop().call_later(COALESCE_WINDOW, self.flush_text)
            return None
        self.flush_text()
        self._enqueue(event)
        return self.seq

    async def committed(self, seq: int) -> None:
        """Return once entry ``seq`` has been written and published."""
        if seq <= self._committed:
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((seq, future))
        await future

    def flush_text(self) -> None:
        """Number the merged text now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        buffered, self._buffer, self._buffer_key = self._buffer, None, None
        chunks, self._chunks, self._chunks_size = self._chunks, [], 0
        if buffered is not None:
            self._enqueue(_merged(buffered, chunks))

    def _add_chunk(self, event: Timeline) -> None:
        item = event.item
        text = item.text if isinstance(item, AssistantMessageItem | ReasoningItem) else ""
        self._chunks.append(text)
        self._chunks_size += len(text)

    def _enqueue(self, event: AgentEvent) -> None:
        assert self.epoch is not None, "load() runs before the first event"
        self.seq += 1
        data = event.model_dump(mode="json", exclude_none=True)
        if self._redactor is not None:
            event, data = redact_event(self._redactor, event, data)
        # Built from values this class made (an id, a counter, an epoch, a timestamp from the
        # clock, an event's dump): validating them again was a tenth of a streamed chunk's cost.
        entry = TimelineEntry.model_construct(
            agentId=self.agent_id,
            seq=self.seq,
            epoch=self.epoch,
            timestamp=iso_now(),
            event=data,
        )
        self._pending.append(Committed(entry, event))
        if self._writer is None:
            self._busy = asyncio.Event()
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        # Let the producers of this loop iteration add theirs first (a prompt's user message
        # and the provider's turn_started): one fsync for all of them.
        try:
            await asyncio.sleep(0)
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    batch = await self._append(batch)
                except Exception:
                    # The agent keeps running and clients keep seeing its events; only their
                    # durability is lost, which the log says.
                    log.exception(
                        "could not persist %d timeline entries of agent %s",
                        len(batch),
                        self.agent_id,
                    )
                try:
                    await self._commit(batch)
                except Exception:
                    log.exception("applying timeline entries of agent %s failed", self.agent_id)
                self._release(batch[-1].entry.seq)
        finally:
            self._writer = None
            if self._busy is not None:
                self._busy.set()
                self._busy = None
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                self._abandon_waiters()

    async def _append(self, batch: list[Committed]) -> list[Committed]:
        """Append ``batch``, with the usage records of the turns it ends in the same atomic
        write when the store can (else the roster adds them after); returns the batch with the
        records written."""
        entries = [committed.entry for committed in batch]
        records: dict[int, UsageRecord] = {}
        if self._usage_of is not None:
            for index, committed in enumerate(batch):
                try:
                    record = await self._usage_of(committed.entry, committed.event)
                except Exception:
                    log.exception("could not account a turn of agent %s", self.agent_id)
                    continue
                if record is not None:
                    records[index] = record
        if records:
            try:
                await self._repository.append_with_usage(entries, list(records.values()))
            except NotImplementedError:
                records = {}
            else:
                return [
                    committed._replace(usage=records.get(index))
                    for index, committed in enumerate(batch)
                ]
        await self._repository.append(entries)
        return batch

    def _abandon_waiters(self) -> None:
        waiting, self._waiters = self._waiters, []
        for _seq, future in waiting:
            future.cancel()

    def _release(self, seq: int) -> None:
        self._committed = seq
        waiting = self._waiters
        self._waiters = [(s, f) for s, f in waiting if s > seq]
        for waited, future in waiting:
            if waited <= seq and not future.done():
                future.set_result(None)

    @property
    def idle(self) -> bool:
        """Nothing buffered, pending or being written."""
        return self._busy is None and self._buffer is None and not self._pending

    async def drain(self) -> None:
        """Return once every event added so far is durable and committed."""
        self.flush_text()
        while self._busy is not None:
            await self._busy.wait()

    def close(self) -> None:
        """Drop pending merged text (the agent is being deleted)."""
        self._abandon_waiters()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._buffer = self._buffer_key = None
        self._chunks, self._chunks_size = [], 0
