"""The ``agent.event`` payload of a durable entry: what ``dump_record`` gives, without a model
dump per streamed chunk."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_hookspecs.records import TimelineEntry, dump_record

from paseo.agents import feed
from paseo.agents.feed import WireStreams, wire_entry

EVENT = {
    "type": "timeline",
    "provider": "claude",
    "item": {"type": "assistant_message", "text": "é"},
}


class Recording:
    def __init__(self) -> None:
        self.published: list[tuple[str, str, Any]] = []

    def publish(self, stream: str, method: str, payload: Any) -> None:
        self.published.append((stream, method, payload))


def _entry(**extra: Any) -> TimelineEntry:
    return TimelineEntry.model_validate(
        {
            "agentId": "aaaa1111-0000-4000-8000-000000000001",
            "seq": 7,
            "epoch": "0123456789abcdef",
            "timestamp": "2026-12-02T16:00:00.000Z",
            "event": EVENT,
            **extra,
        }
    )


def test_a_made_entry_is_published_without_a_model_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _entry()
    expected = dump_record(entry)

    def no_dump(_model: Any) -> Any:
        raise AssertionError("the entry was dumped again")

    monkeypatch.setattr(feed, "dump_record", no_dump)
    publisher = Recording()
    record: Any = type("Record", (), {"id": entry.agentId})()
    WireStreams(publisher).entry_committed(record, entry, None)  # type: ignore[arg-type]
    assert publisher.published == [
        (f"agent:{entry.agentId}", "agent.event", {"agentId": entry.agentId, "entry": expected})
    ]


def test_an_entry_with_unknown_or_absent_fields_keeps_them() -> None:
    with_extra = _entry(newerField={"x": 1})
    assert wire_entry(with_extra) == dump_record(with_extra)
    assert wire_entry(with_extra)["newerField"] == {"x": 1}
    constructed = TimelineEntry.model_construct(
        agentId="a", seq=1, epoch="e", timestamp="2026-12-02T16:00:00Z", event=EVENT
    )
    assert wire_entry(constructed) == dump_record(constructed)
