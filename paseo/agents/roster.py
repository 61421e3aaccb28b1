"""The agents the daemon works with, and the one path their records and timelines change by.

The roster owns the in-memory :class:`~paseo.agents.live.LiveAgent` of each agent it has
*loaded*: every agent with a session, a run, a waiter or unwritten state, plus the most
recently used others up to :data:`KEEP_AT_REST`. Every other agent is only in the store
(listings are the store's, see :mod:`paseo.agents.listing`), so 50,000 closed agents cost the
daemon nothing but the store's own index. :meth:`AgentRoster.get` loads an agent on demand
(by id, id prefix or title, resolved through the store's filters). Events go
in through :meth:`AgentRoster.ingest` (filtered and given their attention by the pure
:func:`paseo.agents.ingest.admit`), are numbered and made durable by the agent's
:class:`~paseo.agents.timeline.AgentTimeline`, and come back to :meth:`AgentRoster._commit`,
which applies their effects (:func:`paseo.agents.ingest.apply`) and hands them to the agents'
typed event source (:class:`~paseo.agents.feed.AgentFeed`: the wire streams, the plugin taps,
the port's subscribers). Record changes go through :meth:`AgentRoster.save` (memory first, then
the record writer, which reports the written record to the feed).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.agents import RecordChangeKind
from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.events import (
    TERMINAL_TURN_EVENTS,
    AgentEvent,
    AttentionRequired,
    ErrorItem,
    ThreadStarted,
    Timeline,
    TurnCanceled,
    Usage,
    UsageReported,
)
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentRecord, dump_record
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter
from pydantic import ValidationError

from paseo.agents import ingest
from paseo.agents.accounting import Accounting
from paseo.agents.budgets import reached, with_turn
from paseo.agents.feed import AgentFeed
from paseo.agents.listing import ListFilter, Page, list_page
from paseo.agents.live import (
    STREAM_ACCESS,
    LiveAgent,
    agent_stream,
    differing,
    runtime_changes,
)
from paseo.agents.record_writer import RecordWriter
from paseo.agents.resolve import resolve_agent
from paseo.agents.timeline import AgentTimeline, Committed
from paseo.agents.tracker import iso_now
from paseo.redaction import Redactor
from paseo.services import Publisher

log = logging.getLogger("paseo.agents")

ACTIVITY_SAVE_INTERVAL = 1.0
"""``lastActivityAt`` alone is written at most this often."""

KEEP_AT_REST = 256
"""Loaded agents with nothing going on that stay loaded (the most recently used): beyond that
the least recently used of them are dropped from memory, to be loaded again from the store."""


class AgentRoster:
    """See the module docstring."""

    def __init__(
        self,
        store: Store,
        publisher: Publisher,
        feed: AgentFeed,
        *,
        redactor: Redactor | None = None,
        budget_reached: Callable[[LiveAgent], None] | None = None,
        daemon_cap: Callable[[AgentRecord, Usage], Awaitable[str | None]] | None = None,
        placed: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.redactor = redactor
        """``daemon.redaction``: every timeline entry is redacted as it is made."""
        self.publisher = publisher
        """Declares the agents' streams (the feed's wire listener publishes on them)."""
        self.feed = feed
        self.agents: dict[str, LiveAgent] = {}
        """The loaded agents, least recently used first."""
        self.accounting = Accounting(store)
        self.budget_reached = budget_reached
        """Called once an agent reached its budget (the agent service interrupts its work)."""
        self.daemon_cap = daemon_cap
        """Which spent ``daemon.budgets`` cap covers an agent whose running turn reported
        ``usage`` (its message), if any."""
        self.placed = placed
        """Waits for the workspaces' late pass over the agents recorded without a workspace
        (:meth:`paseo.agents.ports.WorkspacePlacement.legacy_agents_placed`)."""

    def _record_of(self, agent_id: str) -> AgentRecord | None:
        agent = self.agents.get(agent_id)
        return agent.record if agent is not None else None

    def adopt(self, record: AgentRecord) -> LiveAgent:
        """Load ``record`` (at boot, when created or when first used) and declare its stream;
        drops the least recently used agents at rest beyond :data:`KEEP_AT_REST`."""
        cell: list[LiveAgent] = []
        timeline = AgentTimeline(
            record.id,
            self.store.timeline,
            lambda batch: self._commit(cell[0], batch),
            redactor=self.redactor,
            usage_of=lambda entry, event: self.accounting.usage_of(cell[0].record, entry, event),
        )
        writer = RecordWriter(record.id, self.store.agents, self.publish_record)
        agent = LiveAgent(record=record, timeline=timeline, writer=writer)
        cell.append(agent)
        self._unload_at_rest()
        self.agents[record.id] = agent
        self.publisher.register_stream(agent_stream(record.id), STREAM_ACCESS)
        return agent

    def _unload_at_rest(self) -> None:
        excess = len(self.agents) + 1 - KEEP_AT_REST
        if excess <= 0:
            return
        for agent_id, agent in list(self.agents.items()):
            if agent.unloadable:
                del self.agents[agent_id]
                excess -= 1
                if excess == 0:
                    return

    # ------------------------------------------------------------------ lookups

    async def load(self, agent_id: str) -> LiveAgent | None:
        """The agent with this exact id, loaded from the store if need be; ``None`` when no
        agent has it."""
        agent = self.agents.get(agent_id)
        if agent is None:
            record = await self.store.agents.get(agent_id)
            if record is not None and record.workspaceId is None and self.placed is not None:
                # Recorded by an older program, it may be about to get a workspace: the late
                # pass stamps the store only, so a record adopted before it would stay without
                # one in memory (agent.get, listings by workspace) until unloaded. Read again
                # once the pass is done.
                await self.placed()
                record = await self.store.agents.get(agent_id)
            if record is None or record.deletedAt is not None:
                # A tombstone is no agent: only the trash names it (and restores it).
                return None
            # Another caller may have loaded it while the store was read.
            agent = self.agents.get(agent_id) or self.adopt(record)
            if agent.record.attentionReason == "permission" and agent.session is None:
                # A permission request lives with its process (see recovery): none is alive.
                cleared = {"requiresAttention": False, "attentionReason": None}
                await self.save(agent, {**cleared, "attentionTimestamp": None})
        else:
            # Most recently used last: the first to unload are the longest unused.
            del self.agents[agent_id]
            self.agents[agent_id] = agent
        return agent

    async def get(self, reference: str) -> LiveAgent:
        """The agent ``reference`` names (id, unique prefix or title), loaded."""
        agent = await self.load(reference)
        if agent is not None:
            return agent
        ref = reference.strip()
        candidates: dict[str, AgentRecord] = {}
        if ref:
            for flt in (
                AgentFilter(include_archived=True, id_prefix=ref),
                AgentFilter(include_archived=True, title=ref),
            ):
                page = await self.store.agents.list(flt, limit=MAX_PAGE_SIZE)
                for record in page.items:
                    candidates[record.id] = self._record_of(record.id) or record
        chosen = resolve_agent(reference, candidates.values())
        agent = await self.load(chosen.id)
        if agent is None:
            raise NotFound(f"agent {chosen.id} was deleted", data={"agentId": chosen.id})
        return agent

    async def page(
        self,
        admit: ListFilter,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        newest_first: bool = False,
        now: bool = False,
    ) -> Page:
        """A page of the agents ``admit`` lets through (see :func:`list_page`)."""
        return await list_page(
            self.store.agents,
            self._record_of,
            admit,
            cursor=cursor,
            limit=limit,
            newest_first=newest_first,
            now=now,
        )

    # ------------------------------------------------------------------ records

    def publish_record(self, record: AgentRecord, kind: RecordChangeKind = "updated") -> None:
        """``record`` was first stored (``created``), written or deleted: tell the feed."""
        self.feed.record_changed(kind, record)

    async def save(
        self, agent: LiveAgent, changes: dict[str, Any], *, durable: bool = True
    ) -> None:
        """Apply ``changes`` (JSON-ready, top-level fields) to the record and wake waiters; the
        record writer persists them and then publishes the record. With ``durable`` (anything
        a client is told was done) this returns once they are on disk; without it (state
        derived from timeline entries that are durable already) at once."""
        changes = differing(agent.record, changes)
        if not changes or agent.deleted:
            return
        changes = {**changes, "updatedAt": iso_now()}
        try:
            agent.record = AgentRecord.model_validate({**dump_record(agent.record), **changes})
        except ValidationError as exc:
            raise InvalidParams(f"invalid agent change: {exc.errors()[0].get('msg')}") from exc
        if "lastActivityAt" in changes:
            agent.activity_saved = time.monotonic()
        agent.writer.stage(changes, urgent=durable)
        agent.notify()
        if durable:
            await agent.writer.flush()

    # ------------------------------------------------------------------ events

    async def ingest(
        self, agent: LiveAgent, event: AgentEvent, *, from_provider: bool = False
    ) -> int | None:
        """Filter one event and hand it to the timeline (in order), with the attention it
        raises; returns its sequence number when it was numbered at once."""
        if isinstance(event, UsageReported):
            await self.usage_reported(agent, event.usage)
            return None
        if isinstance(event, TurnCanceled) and agent.budget_stop is not None:
            event = event.model_copy(update={"reason": "budget"})
        admission = ingest.admit(agent, event, from_provider=from_provider)
        if admission is None:
            return None
        seq = await agent.timeline.add(event)
        if admission.attention is not None:
            await agent.timeline.add(
                AttentionRequired(
                    provider=agent.record.provider,
                    reason=admission.attention,
                    timestamp=iso_now(),
                    shouldNotify=True,
                )
            )
        return seq

    async def note(self, agent: LiveAgent, message: str) -> None:
        """An error line in the agent's timeline."""
        await self.ingest(
            agent, Timeline(provider=agent.record.provider, item=ErrorItem(message=message))
        )

    async def usage_reported(self, agent: LiveAgent, usage: Usage) -> None:
        """A provider reported what the running turn spent so far: when that and the agent's
        recorded turns reach its budget, the turn is interrupted after this step (reason
        ``budget``, a timeline note); the turn's end raises attention ``budget``."""
        budget = agent.record.budget
        if agent.budget_stop is not None or not agent.state.busy:
            return
        what = (
            reached(budget, with_turn(await self.accounting.totals(agent.id), usage))
            if budget is not None
            else None
        )
        if what is not None:
            message = (
                f"budget reached during the turn ({what} budget): the turn is interrupted; raise "
                f"it with `paseo agent budget {agent.id[:8]} --tokens N` (or `--usd X`)"
            )
        else:
            cap = await self.daemon_cap(agent.record, usage) if self.daemon_cap else None
            if cap is None:
                return
            what, message = cap, f"budget reached during the turn: {cap}; the turn is interrupted"
        agent.budget_stop = what
        log.info("agent %s reached a budget during a turn: %s", agent.id, what)
        await self.note(agent, message)
        if self.budget_reached is not None:
            self.budget_reached(agent)

    async def _commit(self, agent: LiveAgent, batch: list[Committed]) -> None:
        """Entries are durable: apply their effects, hand them to the feed."""
        changes: dict[str, Any] = {}
        feed = self.feed
        check_budget = False
        for entry, event, usage in batch:
            if event.type in TERMINAL_TURN_EVENTS:
                # Written with the entry; else now, before any client learns the turn ended.
                spent = usage or await self.accounting.turn_ended(agent.record, entry, event)
                check_budget = (
                    check_budget
                    or agent.budget_stop is not None
                    or (spent is not None and agent.record.budget is not None)
                )
            withdrawn = self._apply(agent, event, changes)
            feed.entry_committed(agent.record, entry, event)
            if withdrawn:
                feed.permissions_withdrawn(agent.record, withdrawn)
        if check_budget:
            await self._check_budget(agent)
        if agent.session is not None and any(
            c.event.type in TERMINAL_TURN_EVENTS or isinstance(c.event, ThreadStarted)
            for c in batch
        ):
            changes.update(runtime_changes(agent, agent.session))
        changes = differing(agent.record, changes)
        if changes or time.monotonic() - agent.activity_saved >= ACTIVITY_SAVE_INTERVAL:
            changes["lastActivityAt"] = batch[-1].entry.timestamp
            # Derived from entries that are durable now: waiters need not wait for the disk.
            await self.save(agent, changes, durable=False)
        # Effects without a record change (a permission answered, a turn ended) wake waiters too.
        agent.notify()

    async def _check_budget(self, agent: LiveAgent) -> None:
        """After a turn's usage is recorded: an agent that reached its budget asks for
        attention (``budget``), after the turn's own attention, and its queued or running
        work is interrupted (by the hook the agent service sets)."""
        stopped, agent.budget_stop = agent.budget_stop, None
        what = reached(agent.record.budget, await self.accounting.totals(agent.id)) or stopped
        if what is None:
            return
        log.info("agent %s reached its budget: %s", agent.id, what)
        await agent.timeline.add(
            AttentionRequired(
                provider=agent.record.provider,
                reason="budget",
                timestamp=iso_now(),
                shouldNotify=True,
            )
        )
        if self.budget_reached is not None:
            self.budget_reached(agent)

    @staticmethod
    def _apply(agent: LiveAgent, event: AgentEvent, changes: dict[str, Any]) -> list[str]:
        """Apply ``event``'s effects; returns the pending requests it withdrew."""
        effects = ingest.apply(agent, event)
        changes.update(effects.changes)
        return agent.state.apply(effects)
