"""A session without a socket keeps no timeline numbering: a stream event drops the agent's
index (rebuilt from the durable timeline when a socket needs it) instead of extending it; and a
connection keeps the numbering of a bounded number of agents."""

from __future__ import annotations

import asyncio

from paseo_hookspecs.agents import TimelineEntry, TimelinePage
from paseo_tswire.agent_feed import AgentFeed
from paseo_tswire.connection import MAX_INDEXES
from paseo_tswire.timeline import TimelineIndex
from unit.tswire.harness import client_session

ENTRY = TimelineEntry.model_validate(
    {
        "seq": 7,
        "epoch": "e1",
        "timestamp": "2026-12-01T00:00:00.000Z",
        "event": {
            "type": "timeline",
            "provider": "claude",
            "item": {"type": "assistant_message", "text": "hi", "messageId": "m"},
        },
    }
)


def test_a_detached_session_drops_the_index_instead_of_growing_it() -> None:
    async def scenario() -> dict[str, TimelineIndex]:
        session = client_session()
        session.indexes["a1"] = TimelineIndex(epoch="e1")
        sent: list[str | bytes] = []

        async def send(frame: str | bytes) -> None:
            sent.append(frame)

        async def close() -> None:
            return None

        session.attach(send, close)
        session.detach(send)
        await AgentFeed(session).on_event("a1", ENTRY)
        assert sent == []
        indexes = dict(session.indexes)
        await session.aclose()
        return indexes

    assert asyncio.run(scenario()) == {}


class _Reading:
    """An agent port whose timeline holds one entry per agent."""

    def __init__(self) -> None:
        self.loads: list[str] = []

    async def timeline(
        self, agent_id: str, *, after_seq: int | None = None, limit: int = 200
    ) -> TimelinePage:
        self.loads.append(agent_id)
        entry = ENTRY.model_copy(update={"seq": 1})
        return TimelinePage(epoch="e1", entries=[entry], has_more=False)


def test_a_connection_keeps_a_bounded_number_of_timeline_indexes() -> None:
    async def scenario() -> tuple[list[str], list[str], int]:
        session = client_session()
        reading = _Reading()
        session.agents = reading
        for n in range(MAX_INDEXES + 4):
            await session.index(f"agent-{n}")
            await session.index("agent-0")  # used again: the last to be dropped
        kept = list(session.indexes)
        # A dropped index comes back from the durable copy with the same numbering.
        rebuilt = await session.index("agent-1")
        await session.aclose()
        return kept, reading.loads, rebuilt.rows[0].seq

    kept, loads, seq = asyncio.run(scenario())
    assert len(kept) == MAX_INDEXES
    assert kept[-1] == "agent-0"
    assert "agent-1" not in kept
    assert loads.count("agent-0") == 1
    assert loads[-1] == "agent-1"
    assert loads.count("agent-1") == 2
    assert seq == 1
