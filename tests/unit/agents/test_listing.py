"""The agent index pages by a keyset: no agent repeated or skipped across pages, whatever is
created or deleted between them."""

from __future__ import annotations

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import AgentRecord

from paseo.agents.listing import AgentIndex, ListFilter
from paseo.testing.store_conformance import agent_data, iso


def _record(n: int, **overrides: object) -> AgentRecord:
    return AgentRecord.model_validate(
        agent_data(f"00000000-0000-4000-8000-{n:012x}", created_at=iso(n), **overrides)
    )


def _index(records: dict[str, AgentRecord]) -> AgentIndex:
    index = AgentIndex(records.get)
    for record in records.values():
        index.add(record)
    return index


def _all(index: AgentIndex, admit: ListFilter, *, newest_first: bool, limit: int) -> list[str]:
    ids: list[str] = []
    cursor = None
    while True:
        page = index.page(admit, cursor=cursor, limit=limit, newest_first=newest_first)
        assert len(page.records) <= limit
        ids += [r.id for r in page.records]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def test_pages_cover_every_match_once_in_order_both_ways() -> None:
    # Added out of order: the index sorts by (createdAt, id).
    records = {r.id: r for r in (_record(n, archivedAt=None) for n in (5, 1, 9, 3, 7, 2))}
    index = _index(records)
    oldest = [r.id for r in sorted(records.values(), key=lambda r: r.createdAt)]
    assert _all(index, ListFilter(), newest_first=False, limit=4) == oldest
    assert _all(index, ListFilter(), newest_first=True, limit=4) == oldest[::-1]
    first = index.page(ListFilter(), limit=2, newest_first=True)
    assert first.total == 6
    assert [r.id for r in first.records] == oldest[:-3:-1]
    assert index.page(ListFilter(), cursor=first.next_cursor, limit=2).total is None
    unpaged = index.page(ListFilter())
    assert unpaged.next_cursor is None
    assert unpaged.total == 6


def test_filters_apply_before_the_limit_and_to_the_total() -> None:
    records = {
        r.id: r
        for r in (
            _record(n, archivedAt=iso(100) if n % 2 else None, lastStatus="idle")
            for n in range(10)
        )
    }
    index = _index(records)
    page = index.page(ListFilter(), limit=3)
    assert page.total == 5
    assert all(r.archivedAt is None for r in page.records)
    assert len(_all(index, ListFilter(include_archived=True), newest_first=True, limit=3)) == 10
    assert index.page(ListFilter(statuses={"closed"}), limit=3).records == []


def test_deleted_and_new_agents_between_pages_shift_nothing() -> None:
    records = {r.id: r for r in (_record(n, archivedAt=None) for n in range(6))}
    index = _index(records)
    first = index.page(ListFilter(), limit=3)
    seen = [r.id for r in first.records]
    del records[seen[-1]]
    del records[_record(4).id]
    newcomer = _record(10, archivedAt=None)
    records[newcomer.id] = newcomer
    index.add(newcomer)
    rest = _all_from(index, first.next_cursor)
    assert rest == [_record(3).id, _record(5).id, newcomer.id]
    assert index.count(ListFilter()) == 5


def _all_from(index: AgentIndex, cursor: str | None) -> list[str]:
    ids: list[str] = []
    while cursor is not None:
        page = index.page(ListFilter(), cursor=cursor, limit=2)
        ids += [r.id for r in page.records]
        cursor = page.next_cursor
    return ids


@pytest.mark.parametrize("cursor", ["not-base64!", "bnVsbA", "WzFd"])
def test_a_cursor_not_from_a_page_is_refused_with_what_to_pass(cursor: str) -> None:
    with pytest.raises(InvalidParams, match="nextCursor"):
        AgentIndex({}.get).page(ListFilter(), cursor=cursor)


def test_an_agent_back_from_the_trash_is_listed_once() -> None:
    records = {r.id: r for r in (_record(n, archivedAt=None) for n in (1, 2, 3))}
    index = _index(records)
    middle = _record(2, archivedAt=None)
    gone = records.pop(middle.id)
    assert [r.id for r in index.page(ListFilter()).records] == [
        r.id for r in records.values()
    ]
    # Restored before any full count dropped its key: added again, listed once.
    records[gone.id] = gone
    index.add(gone)
    listed = [r.id for r in index.page(ListFilter(), limit=1).records]
    assert listed == [_record(1).id]
    assert index.count(ListFilter()) == 3
    assert _all(index, ListFilter(), newest_first=False, limit=2) == sorted(records)
