"""The durable agent index (``index/agents.json``): loaded at open instead of the records,
checked against them in the background, rebuilt when it disagrees; partial listings meanwhile."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paseo_store_json._keeper as keeper_module
import pytest
from paseo_hookspecs.records import AgentRecord, dump_record
from paseo_store_json import JsonStore
from paseo_store_json._index_file import INDEX_FILE, read_index
from paseo_store_json._load import scan_agents

AGENT_DIR = "agents/Users-alice-code-api"
WAIT = 30.0


def _ids(count: int) -> list[str]:
    return [f"{i:08x}-0000-4000-8000-000000000000" for i in range(count)]


def _created(i: int) -> str:
    return f"2026-01-01T00:00:{i:02d}.000Z"


async def _filled(home: Path, make_agent: Callable[..., AgentRecord], count: int) -> list[str]:
    """A home of ``count`` closed agents, closed cleanly (so its index file is current)."""
    store = JsonStore(home)
    await store.open()
    ids = _ids(count)
    for i, agent_id in enumerate(ids):
        assert await store.agents.insert(
            make_agent(agent_id, lastStatus="closed", createdAt=_created(i))
        )
    await asyncio.wait_for(store.agents.settled(), WAIT)
    await store.close()
    assert set(read_index(home) or {}) == set(ids)
    return ids


class _Gate:
    """Holds the background check's walk of the records until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def scan(self, *args: Any) -> Any:
        self.entered.set()
        assert self.release.wait(WAIT)
        return scan_agents(*args)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Gate]:
    held = _Gate()
    monkeypatch.setattr(keeper_module, "scan_agents", held.scan)
    yield held
    held.release.set()


def test_open_reads_no_agent_record_and_lists_from_the_index(home, make_agent, gate, monkeypatch):
    async def scenario() -> None:
        gate.release.set()
        ids = await _filled(home, make_agent, 5)
        gate.release.clear()
        # One record unreadable: a listing from the index still names it.
        (home / AGENT_DIR / f"{ids[0]}.json").write_text("{not json")
        store = JsonStore(home)
        await store.open()
        try:
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            assert not store.agents.files.verified
            # Every agent, from the index file alone (the walk is held): flagged partial.
            assert await store.agents.count_now() == 5
            page = await store.agents.list_now(limit=2)
            assert page.partial
            assert [a.id for a in page.items] == ids[:2] or [a.id for a in page.items] == ids[1:3]
            gate.release.set()
            listed = await asyncio.wait_for(store.agents.list(), WAIT)
            assert not listed.partial
            # The check quarantined the unreadable record and dropped it from the index.
            assert [a.id for a in listed.items] == ids[1:]
            assert any(q.original.endswith(f"{ids[0]}.json") for q in store.quarantined)
        finally:
            gate.release.set()
            await store.close()

    asyncio.run(scenario())


def test_records_changed_behind_the_index_are_found_and_the_file_rebuilt(home, make_agent):
    async def scenario() -> None:
        ids = await _filled(home, make_agent, 4)
        folder = home / AGENT_DIR
        (folder / f"{ids[0]}.json").unlink()  # removed behind its back
        changed = dump_record(make_agent(ids[1], lastStatus="closed", createdAt=_created(1)))
        changed["title"] = "renamed by hand"
        changed["labels"] = {"team": "core"}
        (folder / f"{ids[1]}.json").write_text(json.dumps(changed))
        added = "ffffffff-0000-4000-8000-000000000000"
        record = dump_record(make_agent(added, lastStatus="closed", createdAt=_created(9)))
        (folder / f"{added}.json").write_text(json.dumps(record))

        store = JsonStore(home)
        await store.open()
        try:
            listed = await asyncio.wait_for(store.agents.list(), WAIT)
            assert [a.id for a in listed.items] == [*ids[1:], added]
            assert store.index_keeper.last_disagreements == 3
            labelled = await store.agents.list(_with_label("team", "core"))
            assert [a.id for a in labelled.items] == [ids[1]]
        finally:
            await store.close()
        rows = read_index(home) or {}
        assert set(rows) == {*ids[1:], added}
        assert rows[ids[1]].title == "renamed by hand"

    asyncio.run(scenario())


def _with_label(key: str, value: str) -> Any:
    from paseo_hookspecs.store import AgentFilter

    return AgentFilter(labels={key: value})


def test_a_crash_between_a_record_write_and_the_index_write_is_caught(home, make_agent):
    async def scenario() -> None:
        ids = await _filled(home, make_agent, 2)
        crashed = JsonStore(home)
        await crashed.open()
        await asyncio.wait_for(crashed.agents.settled(), WAIT)
        late = "eeeeeeee-0000-4000-8000-000000000000"
        assert await crashed.agents.insert(
            make_agent(late, lastStatus="running", createdAt=_created(5))
        )
        await crashed.agents.delete(ids[0])
        # Killed now: the record writes are durable, the index file (rewritten every few
        # seconds) is not: it still holds the agents as they were.
        assert set(read_index(home) or {}) == set(ids)

        store = JsonStore(home)
        await store.open()
        try:
            # The check finds what the stale file lacks (and drops what it still holds).
            listed = await asyncio.wait_for(store.agents.list(include_all()), WAIT)
            assert [a.id for a in listed.items] == [ids[1], late]
            assert await store.agents.get(late) is not None
        finally:
            await store.close()
            crashed.index_keeper._stop.set()  # the abandoned store's flush loop

    asyncio.run(scenario())


def include_all() -> Any:
    from paseo_hookspecs.store import AgentFilter

    return AgentFilter(include_archived=True)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="torn"),
        pytest.param(lambda data: data.replace(b"closed", b"clxsed", 1), id="digest"),
        pytest.param(lambda data: b"\x00\xff garbage", id="garbage"),
        pytest.param(lambda data: data.replace(b'"version":1', b'"version":99'), id="version"),
        pytest.param(lambda data: b"", id="empty"),
    ],
)
def test_a_damaged_index_file_is_rebuilt_never_a_crash(home, make_agent, damage):
    async def scenario() -> None:
        ids = await _filled(home, make_agent, 3)
        path = home / INDEX_FILE
        path.write_bytes(damage(path.read_bytes()))
        store = JsonStore(home)
        await store.open()
        try:
            listed = await asyncio.wait_for(store.agents.list(), WAIT)
            assert [a.id for a in listed.items] == ids
        finally:
            await store.close()
        assert set(read_index(home) or {}) == set(ids)

    asyncio.run(scenario())


def test_during_a_first_build_listings_are_partial_and_gets_and_writes_are_right(
    home, make_agent, gate
):
    async def scenario() -> None:
        gate.release.set()
        ids = await _filled(home, make_agent, 3)
        (home / INDEX_FILE).unlink()  # a home from before the index
        gate.release.clear()
        store = JsonStore(home)
        await store.open()
        try:
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            page = await store.agents.list_now()
            assert page.partial
            assert page.items == []
            # Get by id reads the record's file; writes see the records on disk.
            found = await store.agents.get(ids[1])
            assert found is not None
            assert found.id == ids[1]
            assert not await store.agents.insert(make_agent(ids[2], lastStatus="closed"))
            updated = await store.agents.update(ids[0], {"title": "during the build"})
            assert updated.title == "during the build"
            assert await store.agents.delete(ids[1])
            assert await store.agents.get(ids[1]) is None
            new = "dddddddd-0000-4000-8000-000000000000"
            assert await store.agents.insert(
                make_agent(new, lastStatus="closed", createdAt=_created(7))
            )
            waiting = asyncio.ensure_future(store.agents.list())
            await asyncio.sleep(0.1)
            assert not waiting.done()  # list() waits for the check, never answers partial
            gate.release.set()
            listed = await asyncio.wait_for(waiting, WAIT)
            assert not listed.partial
            # The deletion during the walk is not undone by what the walk had read.
            assert [a.id for a in listed.items] == [ids[0], ids[2], new]
            assert listed.items[0].title == "during the build"
        finally:
            gate.release.set()
            await store.close()
        assert set(read_index(home) or {}) == {ids[0], ids[2], new}

    asyncio.run(scenario())
