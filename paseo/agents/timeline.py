"""One agent's timeline: numbering, text coalescing, batched durable appends, then fan-out.

Events enter :meth:`AgentTimeline.add` in the order the provider emitted them. Consecutive
text chunks of one message (``assistant_message`` or ``reasoning`` items sharing a
``messageId``) are merged for up to :data:`COALESCE_WINDOW` seconds, so a fast stream becomes a
few entries rather than thousands; any other event flushes the pending text first, so order is
kept and the end of a turn is never delayed. Each entry then gets the next ``seq`` of the
timeline's ``epoch`` and is appended to the store by one writer task per agent, batching
whatever accumulated during the previous append (one fsync per batch). Only after an entry is
durable does the ``commit`` callback see it (to apply its effects and publish it), so a client
never sees a sequence number that a crash could take back.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.records import TimelineEntry
from paseo_hookspecs.store import TimelineRepository

from paseo.agents.tracker import iso_now

log = logging.getLogger("paseo.agents.timeline")

COALESCE_WINDOW = 0.06
"""Seconds text chunks of one message are merged before they are numbered and published."""

COALESCE_LIMIT = 64 * 1024
"""Characters after which merged text is flushed regardless of the window."""

TEXT_ITEMS = frozenset({"assistant_message", "reasoning"})

Commit = Callable[[list[TimelineEntry]], Awaitable[None]]


def new_epoch() -> str:
    """A fresh timeline epoch."""
    return uuid.uuid4().hex[:16]


def _text_key(event: dict[str, Any]) -> tuple[str, str] | None:
    if event.get("type") != "timeline":
        return None
    item = event.get("item")
    if not isinstance(item, dict) or item.get("type") not in TEXT_ITEMS:
        return None
    message_id = item.get("messageId")
    if not isinstance(message_id, str):
        return None
    return str(item["type"]), message_id


class AgentTimeline:
    """See the module docstring."""

    def __init__(self, agent_id: str, repository: TimelineRepository, commit: Commit) -> None:
        self.agent_id = agent_id
        self._repository = repository
        self._commit = commit
        self.epoch: str | None = None
        self.seq = 0
        """The last sequence number assigned."""
        self._load_lock = asyncio.Lock()
        self._loaded = False
        self._pending: list[TimelineEntry] = []
        self._buffer: dict[str, Any] | None = None
        self._buffer_key: tuple[str, str] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
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

    async def add(self, event: dict[str, Any]) -> int | None:
        """Take one event (JSON-ready, with ``type``); returns its sequence number, or
        ``None`` when it is text held for merging."""
        await self.load()
        key = _text_key(event)
        if key is not None and self._buffer is not None and key == self._buffer_key:
            item = self._buffer["item"]
            item["text"] = str(item.get("text") or "") + str(event["item"].get("text") or "")
            if len(item["text"]) >= COALESCE_LIMIT:
                self.flush_text()
            return None
        self.flush_text()
        if key is not None:
            self._buffer = {**event, "item": dict(event["item"])}
            self._buffer_key = key
            self._timer = asyncio.get_running_loop().call_later(COALESCE_WINDOW, self.flush_text)
            return None
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
        if buffered is not None:
            self._enqueue(buffered)

    def _enqueue(self, event: dict[str, Any]) -> None:
        assert self.epoch is not None, "load() runs before the first event"
        self.seq += 1
        self._pending.append(
            TimelineEntry(
                agentId=self.agent_id,
                seq=self.seq,
                epoch=self.epoch,
                timestamp=iso_now(),
                event=event,
            )
        )
        if self._writer is None:
            self._idle.clear()
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        # Let the producers of this loop iteration add theirs first (a prompt's user message
        # and the provider's turn_started): one fsync for all of them.
        try:
            await asyncio.sleep(0)
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    await self._repository.append(batch)
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
                self._release(batch[-1].seq)
        finally:
            self._writer = None
            self._idle.set()
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                self._abandon_waiters()

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

    async def drain(self) -> None:
        """Return once every event added so far is durable and committed."""
        self.flush_text()
        while not self._idle.is_set():
            await self._idle.wait()

    def close(self) -> None:
        """Drop pending merged text (the agent is being deleted)."""
        self._abandon_waiters()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._buffer = self._buffer_key = None
