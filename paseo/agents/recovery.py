"""Boot recovery, and what a restarted daemon rebuilds from the durable timeline.

At boot only the agents the previous daemon left live are loaded (one store query, whatever
the number of agents): each has no process now, so it becomes ``closed``, and a run it had in
flight is recorded as canceled so the timeline says how it ended. Attention ``permission`` is
cleared: the request died with the process (see :func:`drop_dead_permission`; a daemon that
stops cleanly clears it as it closes the session, and an agent loaded later with it still set
has it cleared then). The message ids already sent (for de-duplication) and the
newest reply are read back from the timeline on first use. Stored entries are read as the
wire shape they are.

The boot query is answered from the store's index as it is (``list_now``): a store still
checking it against the records (a large JSON home just opened) does not hold the start back.
When that answer was partial, the same pass runs again once the store has settled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from paseo_hookspecs.events import TERMINAL_TURN_EVENTS, TimelineItem, TurnCanceled
from paseo_hookspecs.records import TimelineEntry
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter
from pydantic import TypeAdapter, ValidationError

from paseo.agents import ingest
from paseo.agents.live import LIVE_STATUSES, LiveAgent
from paseo.agents.roster import AgentRoster
from paseo.agents.state import SEEN_MESSAGES

OPEN_TURN_SCAN = 200
"""Newest timeline entries searched for the start or end of a turn when recovering."""

REPLY_SCAN = 500
"""Newest timeline entries the last reply is rebuilt from."""

_ITEM = TypeAdapter[Any](TimelineItem)


def _item(entry: TimelineEntry) -> dict[str, Any] | None:
    item = entry.event.get("item")
    return item if entry.event.get("type") == "timeline" and isinstance(item, dict) else None


async def adopt_stored(roster: AgentRoster) -> asyncio.Task[None] | None:
    """Load the stored agents the previous daemon left live and close them; when the store's
    answer was partial, the task doing it again once the store has settled (for
    :func:`stop_late`)."""
    if await _adopt(roster, now=True):
        return None
    return asyncio.get_running_loop().create_task(_adopt_when_settled(roster))


async def _adopt_when_settled(roster: AgentRoster) -> None:
    try:
        await roster.store.agents.settled()
        if roster.placed is not None:
            # The workspaces' own late pass over the same settled store: a record it is to
            # stamp is adopted stamped (the stamp reaches the store only).
            await roster.placed()
        await _adopt(roster, now=False)
    except Exception:
        logging.getLogger("paseo.agents").exception("recovering the agents left live failed")


async def stop_late(task: asyncio.Task[None] | None) -> None:
    """Cancel the late pass of :func:`adopt_stored`, if any."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _adopt(roster: AgentRoster, *, now: bool) -> bool:
    """One pass; whether the store's answers were complete."""
    cursor: str | None = None
    live = AgentFilter(include_archived=True, statuses=LIVE_STATUSES)
    listing = roster.store.agents.list_now if now else roster.store.agents.list
    complete = True
    while True:
        # The largest pages the store serves: fewer round trips (SQLite queries) at boot.
        page = await listing(live, cursor=cursor, limit=MAX_PAGE_SIZE)
        complete = complete and not page.partial
        for record in page.items:
            # Recovered as it is loaded: agents at rest may be unloaded by the next ones.
            agent = roster.agents.get(record.id) or roster.adopt(record)
            await recover_closed(roster, agent)
            if agent.record.attentionReason == "permission":
                await drop_dead_permission(roster, agent)
        cursor = page.next_cursor
        if cursor is None:
            return complete


async def drop_dead_permission(roster: AgentRoster, agent: LiveAgent) -> None:
    """A permission request lives with the agent's process: after a restart nothing can answer
    it, and ``permit ls`` (the live requests) cannot list it. Attention ``permission`` is
    cleared, so ``ls`` and ``permit ls`` agree; the next prompt asks again if still needed."""
    await roster.save(
        agent, {"requiresAttention": False, "attentionReason": None, "attentionTimestamp": None}
    )


async def recover_closed(roster: AgentRoster, agent: LiveAgent) -> None:
    """The agent has no process: it is ``closed``; an open turn ends as canceled."""
    if await turn_open(roster, agent):
        agent.state.end_newest()
        await roster.ingest(
            agent, TurnCanceled(provider=agent.record.provider, reason="daemon_restarted")
        )
        await agent.timeline.drain()
    await roster.save(agent, {"lastStatus": "closed"})


async def turn_open(roster: AgentRoster, agent: LiveAgent) -> bool:
    """Whether the timeline ends inside a turn. The timeline decides, not the record: the
    status is written behind the entries it follows from and may lag them by a moment."""
    tail = await roster.store.timeline.read(agent.id, limit=OPEN_TURN_SCAN, tail=True)
    for entry in reversed(tail):
        kind = entry.event.get("type")
        item = _item(entry)
        if kind in TERMINAL_TURN_EVENTS:
            return False
        if kind == "turn_started" or (item is not None and item.get("type") == "user_message"):
            return True
    return agent.record.lastStatus == "running"


async def load_seen(roster: AgentRoster, agent: LiveAgent) -> None:
    """After a restart, the message ids already in the timeline count as sent."""
    if not agent.state.claim_seen_load():
        return
    entries = await roster.store.timeline.read(agent.id, limit=SEEN_MESSAGES, tail=True)
    sent: list[str] = []
    for entry in entries:
        item = entry.event.get("item")
        if isinstance(item, dict) and item.get("type") == "user_message":
            message_id = item.get("messageId")
            if isinstance(message_id, str):
                sent.append(message_id)
    agent.state.seen_rebuilt(sent)


async def load_reply(roster: AgentRoster, agent: LiveAgent) -> None:
    """After a restart, the newest reply is rebuilt from the timeline (once)."""
    if not agent.state.claim_reply_load():
        return
    entries = await roster.store.timeline.read(agent.id, limit=REPLY_SCAN, tail=True)
    reply = agent.state.current_reply
    for entry in entries:
        raw = _item(entry)
        if raw is None or raw.get("type") not in ("assistant_message", "user_message"):
            continue
        try:
            item = _ITEM.validate_python(raw)
        except ValidationError:
            continue  # not an entry this daemon wrote: it says nothing about the reply
        reply = ingest.follow_reply(reply, item)
    agent.state.reply_rebuilt(reply)
