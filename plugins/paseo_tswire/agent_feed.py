"""What a TypeScript client is told of agents, from the agent port's observer callbacks.

One :class:`AgentFeed` per client session is subscribed with
``AgentEvents.subscribe`` on the session's own port (``SessionHandle.agents``: the session's
access, its internal agents excluded). Record changes become ``agent_update`` pushes once the
client asked for them (``fetch_agents_request.subscribe``); timeline entries become
``agent_stream`` pushes for every client (the TypeScript daemon broadcasts them without a
subscribe step), renumbered densely per connection, and ``agent_permission_request`` /
``agent_permission_resolved`` beside the stream events that carry them, so the three stay in
the order the agent produced them.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from paseo_hookspecs.agents import AgentObserver, Agents, RecordChange, TimelineEntry

from paseo_tswire import translate
from paseo_tswire.models import messages as out
from paseo_tswire.models.agent import AgentSnapshot, ProjectPlacement
from paseo_tswire.models.wire import Wire
from paseo_tswire.port import Failure, as_json
from paseo_tswire.timeline import TimelineIndex

log = logging.getLogger("paseo.tswire")


class FeedTarget(Protocol):
    """What the feed needs of its client session (``connection.ClientSession``)."""

    client_id: str
    agents: Agents
    agents_subscribed: bool
    indexes: OrderedDict[str, TimelineIndex]
    record_listeners: list[Callable[[RecordChange], None]]

    @property
    def attached(self) -> bool: ...

    async def push(self, type_: str, payload: Wire) -> None: ...

    async def describe(
        self, record: dict[str, Any], pending: list[dict[str, Any]]
    ) -> tuple[AgentSnapshot, ProjectPlacement]: ...

    async def index(self, agent_id: str) -> TimelineIndex: ...

    def overflowed(self) -> None: ...


class AgentFeed(AgentObserver):
    """See the module docstring."""

    def __init__(self, session: FeedTarget) -> None:
        self.session = session

    async def on_record(self, change: RecordChange) -> None:
        session = self.session
        for listener in session.record_listeners:
            listener(change)
        record = change.record
        if change.kind == "deleted":
            session.indexes.pop(record.id, None)
            if session.agents_subscribed:
                await session.push("agent_update", out.AgentRemove(agentId=record.id))
            return
        if session.agents_subscribed and session.attached:
            await self._upsert(as_json(record))

    async def _upsert(self, record: dict[str, Any]) -> None:
        session = self.session
        agent_id = str(record["id"])
        try:
            pending = [as_json(p) for p in await session.agents.pending_permissions(agent_id)]
        except Failure:
            pending = []
        agent, place = await session.describe(record, pending)
        await session.push("agent_update", out.AgentUpsert(agent=agent, project=place))

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        session = self.session
        if not session.attached:
            # No socket (detached for a reattach, or dropped as too slow): nothing would be
            # pushed, and keeping the numbering current would hold every row of the timeline
            # until the session expires. It is rebuilt from the durable copy when next needed.
            session.indexes.pop(agent_id, None)
            return
        data = as_json(entry.event)
        event = translate.event(data)
        if event is None:
            return
        seq: int | None = None
        epoch: str | None = None
        if data.get("type") == "timeline":
            kept = session.indexes.get(agent_id)
            if kept is not None and kept.epoch != entry.epoch:
                # The timeline was rebuilt: renumber from the durable copy.
                session.indexes.pop(agent_id, None)
            index = await session.index(agent_id)
            row = index.add({"seq": entry.seq, "timestamp": entry.timestamp, "event": data})
            if row is None:
                return
            seq, epoch = row.seq, index.epoch
        await session.push(
            "agent_stream",
            out.AgentStream(
                agentId=agent_id, event=event, timestamp=entry.timestamp, seq=seq, epoch=epoch
            ),
        )
        if data.get("type") == "permission_requested":
            request = translate.permission(
                data.get("request") or {}, str(data.get("provider") or "")
            )
            await session.push(
                "agent_permission_request",
                out.PermissionRequestPush(agentId=agent_id, request=request),
            )
        elif data.get("type") == "permission_resolved":
            await session.push(
                "agent_permission_resolved",
                out.PermissionResolvedPush(
                    agentId=agent_id,
                    requestId=str(data.get("requestId") or ""),
                    resolution=translate.resolution(data.get("resolution") or {}),
                ),
            )

    async def on_overflow(self, lost: int) -> None:
        """This feed fell ``lost`` callbacks behind: the client's view has holes it cannot
        see (a record change, a stream event). Drop it as too slow: it reconnects, refetches,
        and the numbering is rebuilt from the durable copy."""
        log.warning(
            "tswire: %s lost %d agent updates behind its connection; closing it",
            self.session.client_id,
            lost,
        )
        self.session.overflowed()
