"""Agent listings page through the store by a keyset: no agent repeated or skipped across
pages whatever is created or deleted between them, and a loaded agent is listed as the daemon
holds it (ahead of a change written behind)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import AgentRecord, agent_record_path
from paseo_store_json import JsonStore

from paseo.agents.listing import ListFilter, Page, list_page
from paseo.testing.store_conformance import agent_data, iso


def _data(n: int, **overrides: Any) -> dict[str, Any]:
    return agent_data(f"00000000-0000-4000-8000-{n:012x}", created_at=iso(n), **overrides)


def _record(n: int, **overrides: Any) -> AgentRecord:
    return AgentRecord.model_validate(_data(n, **overrides))


def _run(
    home: Path, body: Callable[[JsonStore], Awaitable[None]], records: list[AgentRecord]
) -> None:
    async def main() -> None:
        store = JsonStore(home)
        await store.open()
        try:
            for record in records:
                assert await store.agents.insert(record)
            await body(store)
        finally:
            await store.close()

    asyncio.run(main())


def _none(agent_id: str) -> AgentRecord | None:
    return None


async def _all(
    store: JsonStore,
    admit: ListFilter,
    *,
    newest_first: bool,
    limit: int,
    loaded: Callable[[str], AgentRecord | None] = _none,
) -> list[str]:
    ids: list[str] = []
    cursor = None
    while True:
        page = await list_page(
            store.agents, loaded, admit, cursor=cursor, limit=limit, newest_first=newest_first
        )
        assert len(page.records) <= limit
        ids += [r.id for r in page.records]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def test_pages_cover_every_match_once_in_order_both_ways(tmp_path: Path) -> None:
    # Inserted out of order: the listing is by (createdAt, id).
    records = [_record(n, archivedAt=None) for n in (5, 1, 9, 3, 7, 2)]
    oldest = [r.id for r in sorted(records, key=lambda r: r.createdAt)]

    async def body(store: JsonStore) -> None:
        assert await _all(store, ListFilter(), newest_first=False, limit=4) == oldest
        assert await _all(store, ListFilter(), newest_first=True, limit=4) == oldest[::-1]
        first = await list_page(store.agents, _none, ListFilter(), limit=2, newest_first=True)
        assert first.total == 6
        assert [r.id for r in first.records] == oldest[:-3:-1]
        later = await list_page(
            store.agents, _none, ListFilter(), cursor=first.next_cursor, limit=2
        )
        assert later.total is None
        unpaged = await list_page(store.agents, _none, ListFilter())
        assert unpaged.next_cursor is None
        assert unpaged.total == 6

    _run(tmp_path / "home", body, records)


def test_filters_apply_before_the_limit_and_to_the_total(tmp_path: Path) -> None:
    records = [
        _record(n, archivedAt=iso(100) if n % 2 else None, lastStatus="idle") for n in range(10)
    ]

    async def body(store: JsonStore) -> None:
        page = await list_page(store.agents, _none, ListFilter(), limit=3)
        assert page.total == 5
        assert all(r.archivedAt is None for r in page.records)
        every = await _all(store, ListFilter(include_archived=True), newest_first=True, limit=3)
        assert len(every) == 10
        closed = await list_page(store.agents, _none, ListFilter(statuses={"closed"}), limit=3)
        assert closed.records == []

    _run(tmp_path / "home", body, records)


def test_a_loaded_agent_is_listed_as_held_in_memory(tmp_path: Path) -> None:
    records = [_record(n, archivedAt=None, lastStatus="idle") for n in range(4)]
    # In memory: one agent has a newer title, another is archived already (written behind).
    held = {
        records[1].id: records[1].model_copy(update={"title": "newer"}),
        records[2].id: records[2].model_copy(update={"archivedAt": iso(50)}),
    }

    async def body(store: JsonStore) -> None:
        listed = await list_page(store.agents, held.get, ListFilter())
        assert [r.id for r in listed.records] == [records[0].id, records[1].id, records[3].id]
        assert listed.records[1].title == "newer"

    _run(tmp_path / "home", body, records)


def test_deleted_and_new_agents_between_pages_shift_nothing(tmp_path: Path) -> None:
    records = [_record(n, archivedAt=None) for n in range(6)]

    async def body(store: JsonStore) -> None:
        first = await list_page(store.agents, _none, ListFilter(), limit=3)
        seen = [r.id for r in first.records]
        assert await store.agents.delete(seen[-1])
        assert await store.agents.delete(_record(4).id)
        newcomer = _record(10, archivedAt=None)
        assert await store.agents.insert(newcomer)
        rest: list[str] = []
        cursor = first.next_cursor
        while cursor is not None:
            page = await list_page(store.agents, _none, ListFilter(), cursor=cursor, limit=2)
            rest += [r.id for r in page.records]
            cursor = page.next_cursor
        assert rest == [_record(3).id, _record(5).id, newcomer.id]
        assert (await list_page(store.agents, _none, ListFilter())).total == 5

    _run(tmp_path / "home", body, records)


def test_an_unpaged_listing_gathers_every_store_page(tmp_path: Path) -> None:
    """More agents than the store serves in one page: all of them, once each."""
    home = tmp_path / "home"
    count = 1234
    for n in range(count):
        data = _data(n, archivedAt=None)
        path = home / agent_record_path(data["id"], data["cwd"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    async def body(store: JsonStore) -> None:
        page: Page = await list_page(store.agents, _none, ListFilter())
        assert [r.id for r in page.records] == [_record(n).id for n in range(count)]
        assert (page.next_cursor, page.total) == (None, count)

    _run(home, body, [])


@pytest.mark.parametrize("cursor", ["not-base64!", "bnVsbA", "WzFd"])
def test_a_cursor_not_from_a_page_is_refused(tmp_path: Path, cursor: str) -> None:
    async def body(store: JsonStore) -> None:
        with pytest.raises(InvalidParams, match="cursor"):
            await list_page(store.agents, _none, ListFilter(), cursor=cursor)

    _run(tmp_path / "home", body, [])


def test_an_agent_back_from_the_trash_is_listed_once(tmp_path: Path) -> None:
    records = [_record(n, archivedAt=None) for n in (1, 2, 3)]
    middle = records[1]

    async def body(store: JsonStore) -> None:
        await store.agents.update(middle.id, {"deletedAt": iso(10)})
        page = await list_page(store.agents, _none, ListFilter())
        assert [r.id for r in page.records] == [records[0].id, records[2].id]
        assert page.total == 2
        restored = await store.agents.update(middle.id, {"deletedAt": None})
        # Loaded again by the restore (the daemon's readmit) and in the store: listed once.
        held = {middle.id: restored}
        assert await _all(store, ListFilter(), newest_first=False, limit=1, loaded=held.get) == [
            r.id for r in records
        ]
        assert (await list_page(store.agents, held.get, ListFilter(), limit=1)).total == 3
