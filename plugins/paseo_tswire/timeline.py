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
PAGE = 16
"""Entries read per ``AgentControl.timeline`` call while building an index. Few: the page is
parsed whole before the index keeps its newest rows, and one entry can be a large message (a
page of 1000 half-megabyte prompts held some 100 MB at once, past a stalled client's bound)."""


ROWS_BYTES = 2 * 1024 * 1024
"""Bytes of rows (their text, roughly) one index keeps: the newest rows that fit (and at least
the newest one). Older rows are numbered but not kept: a session follows up to
``MAX_INDEXES`` agents, each of whose timelines can be far larger than what its client shows."""


@dataclass(frozen=True)
class Row:
    """One canonical timeline item in the clients' numbering."""

    seq: int
    timestamp: str
    provider: str
    item: Any


def weight(value: Any) -> int:
    """Rough bytes of a JSON value (its strings' lengths plus a little per node): what a row
    costs to keep, without encoding it."""
    if isinstance(value, str):
        return len(value) + 16
    if isinstance(value, dict):
        return 16 + sum(len(str(k)) + weight(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return 16 + sum(weight(v) for v in value)
    return 16


@dataclass
class TimelineIndex:
    """The canonical rows of one agent's current epoch (see the module docstring): every item
    is numbered, the newest :data:`ROWS_BYTES` of them are kept (a window, like the clients'
    ``minSeq``..``maxSeq``)."""

    epoch: str
    rows: list[Row] = field(default_factory=list)
    by_source: dict[int, int] = field(default_factory=dict)
    """This daemon's ``seq`` of each kept timeline entry → its dense ``seq``."""
    last_source: int = 0
    budget: int = ROWS_BYTES
    count: int = 0
    """Items numbered so far (the dense ``seq`` of the newest)."""
    kept_bytes: int = 0
    sources: list[int] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)
    """Per kept row (same order): its source ``seq`` and its :func:`weight`."""

    def add(self, entry: dict[str, Any]) -> Row | None:
        """Number one entry of this daemon's timeline; ``None`` when it is not a timeline item
        (or its kind is unknown to the clients). An entry already numbered keeps its number."""
        source = int(entry.get("seq") or 0)
        known = self.by_source.get(source)
        if known is not None:
            return self.rows[known - self.rows[0].seq]
        if source <= self.last_source:
            return None
        self.last_source = source
        event = entry.get("event") or {}
        if event.get("type") != "timeline":
            return None
        translated = translate.item(event.get("item") or {})
        if translated is None:
            return None
        self.count += 1
        row = Row(
            seq=self.count,
            timestamp=str(entry.get("timestamp") or ""),
            provider=str(event.get("provider") or ""),
            item=translated,
        )
        cost = weight(event.get("item"))
        self.rows.append(row)
        self.sources.append(source)
        self.weights.append(cost)
        self.by_source[source] = row.seq
        self.kept_bytes += cost
        self._trim()
        return row

    def _trim(self) -> None:
        """Drop the oldest rows past :attr:`budget` (the newest always stays)."""
        drop = 0
        while self.kept_bytes > self.budget and drop < len(self.rows) - 1:
            self.kept_bytes -= self.weights[drop]
            del self.by_source[self.sources[drop]]
            drop += 1
        if drop:
            del self.rows[:drop], self.sources[:drop], self.weights[:drop]

    @property
    def window(self) -> tuple[int, int, int]:
        """``(minSeq, maxSeq, nextSeq)``."""
        if not self.rows:
            return 0, 0, self.count + 1
        return self.rows[0].seq, self.rows[-1].seq, self.rows[-1].seq + 1


class TimelineReader(Protocol):
    """The part of the agent port :func:`load` reads (``AgentControl.timeline``)."""

    async def timeline(
        self, agent_id: str, *, after_seq: int | None = None, limit: int = 200
    ) -> TimelinePage: ...


async def load(agents: TimelineReader, agent_id: str) -> TimelineIndex:
    """Number the durable timeline of ``agent_id`` (oldest first, a page at a time) into a
    fresh index, which keeps only its newest rows: memory is a page and the index's bound,
    whatever the timeline's length (the time is a read of all of it)."""
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
