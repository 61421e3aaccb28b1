"""``fetch_agent_timeline_request``: tail / before / after pages of the dense, projected
timeline (see :mod:`paseo_tswire.timeline`)."""

from __future__ import annotations

from paseo_tswire import timeline
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import inbound as req
from paseo_tswire.models import messages as out
from paseo_tswire.models.timeline import Cursor
from paseo_tswire.port import Failure


async def fetch_timeline(session: ClientSession, msg: req.FetchTimeline) -> None:
    try:
        agent, _ = await session.snapshot(msg.agentId)
    except Failure as exc:
        if exc.code != "not_found":
            raise
        await session.push(
            "fetch_agent_timeline_response",
            out.FetchTimeline(
                requestId=msg.requestId,
                agentId=msg.agentId,
                agent=None,
                direction=msg.direction,
                projection=msg.projection,
                epoch="",
                reset=False,
                staleCursor=False,
                gap=False,
                window=out.Window(minSeq=0, maxSeq=0, nextSeq=1),
                startCursor=None,
                endCursor=None,
                hasOlder=False,
                hasNewer=False,
                entries=[],
                error=exc.message,
            ),
        )
        return
    # A fetch re-reads the durable timeline: it is the client's way back after a gap.
    session.indexes.pop(agent.id, None)
    index = await session.index(agent.id)
    cursor = Cursor(epoch=msg.cursor.epoch, seq=msg.cursor.seq) if msg.cursor else None
    page = timeline.select(
        index,
        direction=msg.direction,
        cursor=cursor,
        limit=msg.limit or 0,
        projection=msg.projection,
    )
    low, high, following = index.window
    first = page.entries[0] if page.entries else None
    last = page.entries[-1] if page.entries else None
    await session.push(
        "fetch_agent_timeline_response",
        out.FetchTimeline(
            requestId=msg.requestId,
            agentId=agent.id,
            agent=agent,
            direction=msg.direction,
            projection=msg.projection,
            epoch=index.epoch,
            reset=page.reset,
            staleCursor=page.stale_cursor,
            gap=page.gap,
            window=out.Window(minSeq=low, maxSeq=high, nextSeq=following),
            startCursor=Cursor(epoch=index.epoch, seq=min(e.seqStart for e in page.entries))
            if first
            else None,
            endCursor=Cursor(epoch=index.epoch, seq=max(e.seqEnd for e in page.entries))
            if last
            else None,
            hasOlder=page.has_older,
            hasNewer=page.has_newer,
            entries=page.entries,
            error=None,
        ),
    )
