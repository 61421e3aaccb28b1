"""``differing``: what of a batch's changes would change the agent record."""

from __future__ import annotations

import pytest
from paseo_hookspecs.records import AgentRecord

from paseo.agents import live
from paseo.agents.live import differing

RECORD = AgentRecord(id="a1", provider="claude", cwd="/w", createdAt="t", updatedAt="t")


def test_no_changes_cost_no_record_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    # A streamed-text batch changes nothing in the record: it must not dump the record (the
    # dump was a share of every streamed chunk's cost).
    def no_dump(_record: object) -> object:
        raise AssertionError("the record was dumped")

    monkeypatch.setattr(live, "dump_record", no_dump)
    assert differing(RECORD, {}) == {}


def test_changes_are_kept_only_where_they_differ() -> None:
    assert differing(RECORD, {"cwd": "/w", "title": "new"}) == {"title": "new"}
