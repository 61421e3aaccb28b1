"""Dense timeline numbering and the projected view the TypeScript clients read.

This daemon numbers every stream event of an agent (turn events too); the clients number only
timeline items, densely from 1 within an epoch, and treat any jump as a gap to refetch. A
:class:`TimelineIndex` keeps, per agent, the canonical rows in their numbering (built from the
durable timeline, then extended by live events), so fetched pages and ``agent_stream`` pushes
agree. :func:`project` merges them as the clients expect: a tool call's rows into one entry,
consecutive assistant or reasoning chunks into one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from paseo_hookspecs.agents import TimelinePage

from paseo_tswire import translate
from paseo_tswire.models import timeline as ts
from paseo_tswire.port import as_json

Direction = Literal["tail", "before", "after"]
Collapse = Literal["assistant_merge", "reasoning_merge", "tool_lifecycle"]
PAGE = 1000
"""Entries read per ``AgentControl.timeline`` call while building an index (``agent.timeline``'s
maximum, kept so one read stays bounded)."""


@dataclass(frozen=True)
class Row:
    """One canonical timeline item in the clients' numbering."""

    seq: int
    timestamp: str
    provider: str
    item: Any


@dataclass
class TimelineIndex:
    """The canonical rows of one agent's current epoch (see the module docstring)."""

    epoch: str
    rows: list[Row] = field(default_factory=list)
    by_source: dict[int, int] = field(default_factory=dict)
    """This daemon's ``seq`` of each timeline entry → its dense ``seq``."""
    last_source: int = 0

    def add(self, entry: dict[str, Any]) -> Row | None:
        """Number one entry of this daemon's timeline; ``None`` when it is not a timeline item
        (or its kind is unknown to the clients). An entry already numbered keeps its number."""
        source = int(entry.get("seq") or 0)
        known = self.by_source.get(source)
        if known is not None:
            return self.rows[known - 1]
        if source <= self.last_source:
            return None
        self.last_source = source
        event = entry.get("event") or {}
        if event.get("type") != "timeline":
            return None
        translated = translate.item(event.get("item") or {})
        if translated is None:
            return None
        row = Row(
            seq=len(self.rows) + 1,
            timestamp=str(entry.get("timestamp") or ""),
            provider=str(event.get("provider") or ""),
            item=translated,
        )
        self.rows.append(row)
        self.by_source[source] = row.seq
        return row

    @property
    def window(self) -> tuple[int, int, int]:
        """``(minSeq, maxSeq, nextSeq)``."""
        if not self.rows:
            return 0, 0, 1
        return self.rows[0].seq, self.rows[-1].seq, self.rows[-1].seq + 1


class TimelineReader(Protocol):
    """The part of the agent port :func:`load` reads (``AgentControl.timeline``)."""

    async def timeline(
        self, agent_id: str, *, after_seq: int | None = None, limit: int = 200
    ) -> TimelinePage: ...


async def load(agents: TimelineReader, agent_id: str) -> TimelineIndex:
    """Read the whole durable timeline of ``agent_id`` (oldest first) into a fresh index."""
    while True:
        index: TimelineIndex | None = None
        after: int | None = None
        while True:
            page = await agents.timeline(agent_id, after_seq=after, limit=PAGE)
            if index is None:
                index = TimelineIndex(epoch=page.epoch)
            elif page.epoch != index.epoch or page.reset:
                break  # rebuilt while reading: start over in the new epoch
            for entry in page.entries:
                index.add(
                    {"seq": entry.seq, "timestamp": entry.timestamp, "event": as_json(entry.event)}
                )
            if not page.has_more or not page.entries:
                return index
            after = page.entries[-1].seq


def _canonical(row: Row) -> ts.TimelineEntry:
    return ts.TimelineEntry(
        provider=row.provider,
        item=row.item,
        timestamp=row.timestamp,
        seqStart=row.seq,
        seqEnd=row.seq,
        sourceSeqRanges=[ts.SeqRange(startSeq=row.seq, endSeq=row.seq)],
        collapsed=[],
    )


def _ranges(existing: list[ts.SeqRange], incoming: list[ts.SeqRange]) -> list[ts.SeqRange]:
    merged = [ts.SeqRange(startSeq=r.startSeq, endSeq=r.endSeq) for r in existing]
    for new in incoming:
        last = merged[-1] if merged else None
        if last is not None and new.startSeq <= last.endSeq + 1:
            last.endSeq = max(last.endSeq, new.endSeq)
        else:
            merged.append(ts.SeqRange(startSeq=new.startSeq, endSeq=new.endSeq))
    return merged


def _with(entry: ts.TimelineEntry, kind: Collapse) -> list[Collapse]:
    return entry.collapsed if kind in entry.collapsed else [*entry.collapsed, kind]


def _collapse_tools(entries: list[ts.TimelineEntry]) -> list[ts.TimelineEntry]:
    out: list[ts.TimelineEntry] = []
    at: dict[str, int] = {}
    for entry in entries:
        call = entry.item
        if not isinstance(call, ts.ToolCallItem):
            out.append(entry)
            continue
        index = at.get(call.callId)
        if index is None:
            at[call.callId] = len(out)
            out.append(entry)
            continue
        first = out[index]
        previous = first.item
        assert isinstance(previous, ts.ToolCallItem)
        keep_detail = isinstance(call.detail, ts.UnknownDetail) and not isinstance(
            previous.detail, ts.UnknownDetail
        )
        merged = call.model_copy(update={"detail": previous.detail if keep_detail else call.detail})
        out[index] = first.model_copy(
            update={
                "item": merged,
                "seqEnd": max(first.seqEnd, entry.seqEnd),
                "sourceSeqRanges": _ranges(first.sourceSeqRanges, entry.sourceSeqRanges),
                "collapsed": _with(first, "tool_lifecycle"),
            }
        )
    return out


def _merge_text(
    entries: list[ts.TimelineEntry], kind: type[ts.AssistantMessageItem | ts.ReasoningItem]
) -> list[ts.TimelineEntry]:
    label: Collapse = "assistant_merge" if kind is ts.AssistantMessageItem else "reasoning_merge"
    out: list[ts.TimelineEntry] = []
    for entry in entries:
        previous = out[-1] if out else None
        if (
            previous is not None
            and isinstance(previous.item, kind)
            and isinstance(entry.item, kind)
            and previous.seqEnd + 1 == entry.seqStart
        ):
            out[-1] = previous.model_copy(
                update={
                    "item": kind(text=previous.item.text + entry.item.text),
                    "seqEnd": entry.seqEnd,
                    "sourceSeqRanges": _ranges(previous.sourceSeqRanges, entry.sourceSeqRanges),
                    "collapsed": _with(previous, label),
                }
            )
            continue
        out.append(entry)
    return out


def project(
    rows: list[Row], projection: Literal["projected", "canonical"]
) -> list[ts.TimelineEntry]:
    """The entries of ``rows`` in the requested view."""
    entries = [_canonical(row) for row in rows]
    if projection == "canonical":
        return entries
    merged = _merge_text(_collapse_tools(entries), ts.AssistantMessageItem)
    return _merge_text(merged, ts.ReasoningItem)


@dataclass(frozen=True)
class Page:
    """One answer of ``fetch_agent_timeline_request`` before it is wrapped."""

    entries: list[ts.TimelineEntry]
    reset: bool
    stale_cursor: bool
    gap: bool
    has_older: bool
    has_newer: bool


def select(
    index: TimelineIndex,
    *,
    direction: Direction,
    cursor: ts.Cursor | None,
    limit: int,
    projection: Literal["projected", "canonical"],
) -> Page:
    """The window a client asked for; ``limit`` counts entries of the view (0: all)."""
    rows = index.rows
    min_seq, max_seq, _ = index.window
    stale = cursor is not None and cursor.epoch != index.epoch
    gap = (
        not stale
        and direction == "after"
        and cursor is not None
        and bool(rows)
        and cursor.seq < min_seq - 1
    )
    if stale or gap:
        direction = "tail"
        cursor = None
    if direction == "after":
        base = cursor.seq if cursor is not None else 0
        bounded = [row for row in rows if row.seq > base]
    elif direction == "before":
        before = cursor.seq if cursor is not None else max_seq + 1
        bounded = [row for row in rows if row.seq < before]
    else:
        bounded = rows
    entries = project(bounded, projection)
    if 0 < limit < len(entries):
        entries = entries[:limit] if direction == "after" else entries[-limit:]
    if not entries:
        older = direction == "after" and bool(rows) and (cursor.seq if cursor else 0) >= min_seq
        return Page([], stale or gap, stale, gap, older, direction == "before" and bool(rows))
    low = min(entry.seqStart for entry in entries)
    high = max(entry.seqEnd for entry in entries)
    return Page(entries, stale or gap, stale, gap, low > min_seq, high < max_seq)
