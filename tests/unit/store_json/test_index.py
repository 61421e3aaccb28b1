"""The compact index: full records live on disk and in a bounded cache; a file damaged behind
the store's back is quarantined when it is next read, never served or silently dropped."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from paseo_hookspecs.records import CleanupItem, agent_record_path, dump_record
from paseo_hookspecs.store import AgentFilter
from paseo_store_json import JsonStore
from paseo_store_json._index import agent_candidates

AGENTS = [f"3b8f1c2e-7a4d-4e9b-9c61-{i:012x}" for i in range(12)]


def test_the_cache_stays_bounded_and_evicted_records_read_back(home, make_agent):
    async def main() -> None:
        store = JsonStore(home, cache_records=3)
        await store.open()
        written = {}
        for index, agent_id in enumerate(AGENTS):
            record = make_agent(agent_id, title=f"agent {index}")
            assert await store.agents.insert(record)
            written[agent_id] = dump_record(record)
        renamed = await store.agents.update(AGENTS[0], {"title": "renamed"})
        written[AGENTS[0]] = dump_record(renamed)
        for agent_id in AGENTS:
            got = await store.agents.get(agent_id)
            assert got is not None
            assert dump_record(got) == written[agent_id]
            assert len(store.agents.files.cache) <= 3
        page = await store.agents.list(limit=100)
        assert {a.id: dump_record(a) for a in page.items} == written
        await store.close()

    asyncio.run(main())


def test_a_file_damaged_after_open_is_quarantined_at_its_next_read(home, make_agent, caplog):
    async def main() -> tuple[Path, Path]:
        store = JsonStore(home, cache_records=0)
        await store.open()
        for agent_id in AGENTS[:3]:
            assert await store.agents.insert(make_agent(agent_id))
        damaged = home / agent_record_path(AGENTS[1], make_agent(AGENTS[1]).cwd)
        damaged.write_text('{"id": "' + AGENTS[1] + '", "provider": ')

        with caplog.at_level("WARNING", logger="paseo.store.json"):
            page = await store.agents.list(limit=2)
        # The page is filled from the rows after the damaged one, not cut short.
        assert [a.id for a in page.items] == [AGENTS[0], AGENTS[2]]
        assert page.next_cursor is None
        [moved] = store.quarantined
        assert moved.original == str(damaged)
        assert "not valid JSON" in moved.reason
        assert str(damaged) in caplog.text
        assert await store.agents.get(AGENTS[1]) is None
        assert await store.agents.count(AgentFilter()) == 2
        await store.close()
        return damaged, Path(moved.moved_to)

    damaged, moved_to = asyncio.run(main())
    assert not damaged.exists()
    assert moved_to.read_text().startswith('{"id": "' + AGENTS[1])


def test_an_update_reads_an_evicted_record_from_its_file(home, make_agent):
    async def main() -> None:
        store = JsonStore(home, cache_records=0)
        await store.open()
        assert await store.agents.insert(make_agent(AGENTS[0], title="before"))
        updated = await store.agents.update(
            AGENTS[0], {"lastStatus": "closed"}, expect={"title": "before"}
        )
        assert updated.title == "before"
        await store.close()
        reopened = JsonStore(home)
        await reopened.open()
        again = await reopened.agents.get(AGENTS[0])
        assert again is not None
        assert (again.title, again.lastStatus) == ("before", "closed")
        await reopened.close()

    asyncio.run(main())


def test_a_field_outside_the_index_is_validated_when_first_read(home, make_agent):
    """Open checks the JSON and the indexed fields; the rest of a record is checked when it is
    read in full, and a file failing then is quarantined, not served."""
    good = make_agent(AGENTS[0])
    bad = dump_record(make_agent(AGENTS[1]))
    bad["config"] = {**(bad.get("config") or {}), "modeId": 5}
    for data in (dump_record(good), bad):
        path = home / agent_record_path(data["id"], data["cwd"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    async def main() -> list[str]:
        store = JsonStore(home)
        await store.open()
        assert store.quarantined == []
        page = await store.agents.list()
        assert [a.id for a in page.items] == [AGENTS[0]]
        assert await store.agents.get(AGENTS[1]) is None
        reasons = [q.reason for q in store.quarantined]
        await store.close()
        return reasons

    [reason] = asyncio.run(main())
    assert "config.modeId" in reason


def test_tombstones_are_in_the_index_and_restore_and_purge_read_evicted_records(home, make_agent):
    """``deletedAt`` is an index field: listings and counts leave a tombstone out without
    reading its file, also after a reopen; a restore and a purge of a tombstone no longer in
    the cache read it back from its file."""
    deleted_at = "2026-01-02T00:00:00.000Z"

    async def main() -> None:
        store = JsonStore(home, cache_records=1)
        await store.open()
        for agent_id in AGENTS[:4]:
            assert await store.agents.insert(make_agent(agent_id, title=agent_id[-2:]))
        for agent_id in AGENTS[:2]:
            await store.agents.update(agent_id, {"deletedAt": deleted_at})
        await store.close()

        store = JsonStore(home, cache_records=1)
        await store.open()
        assert store.agents.files.index.rows[AGENTS[0]].deletedAt == deleted_at
        live = [a.id for a in (await store.agents.list(AgentFilter(), limit=100)).items]
        assert live == AGENTS[2:4]
        assert await store.agents.count(AgentFilter()) == 2
        assert await store.agents.count(AgentFilter(trashed=True)) == 2
        assert await store.agents.count(AgentFilter(trashed=None)) == 4
        # Evict both tombstones: the cache holds one record, the last one read.
        assert await store.agents.get(AGENTS[3]) is not None
        assert len(store.agents.files.cache) == 1
        restored = await store.agents.update(
            AGENTS[0], {"deletedAt": None}, expect={"deletedAt": deleted_at}
        )
        assert (restored.deletedAt, restored.title) == (None, AGENTS[0][-2:])
        assert await store.agents.count(AgentFilter()) == 3
        assert await store.agents.get(AGENTS[3]) is not None
        item = CleanupItem(
            id="cln_1", agentId=AGENTS[1], deletedAt=deleted_at, createdAt=deleted_at
        )
        assert await store.trash.purge(AGENTS[1], deleted_at=deleted_at, item=item)
        assert await store.agents.get(AGENTS[1]) is None
        assert [q.id for q in await store.trash.queued()] == ["cln_1"]
        await store.close()

        store = JsonStore(home, cache_records=0)
        await store.open()
        assert await store.agents.count(AgentFilter(trashed=None)) == 3
        assert await store.agents.count(AgentFilter(trashed=True)) == 0
        [queued] = await store.trash.queued()
        assert (queued.agentId, queued.deletedAt) == (AGENTS[1], deleted_at)
        await store.close()

    asyncio.run(main())


def test_listings_by_status_or_label_walk_only_the_rows_having_them(home, make_agent):
    """Few live or labelled agents among many closed ones are found from the facet index
    (not a walk of every row), in the same order and pages as a walk, and stay in step with
    writes and deletes."""
    many = [f"5d1e2f3a-0000-4000-8000-{i:012x}" for i in range(120)]

    def stamp(i: int) -> str:
        # Not in id order: the pages must follow (createdAt, id).
        return f"2026-01-01T00:{(i * 37) % 60:02d}:{i % 7:02d}.000Z"

    async def pages(store: JsonStore, flt: AgentFilter, *, newest_first: bool) -> list[str]:
        seen: list[str] = []
        cursor = None
        while True:
            page = await store.agents.list(flt, cursor=cursor, limit=2, newest_first=newest_first)
            seen += [a.id for a in page.items]
            cursor = page.next_cursor
            if cursor is None:
                return seen

    async def main() -> None:
        store = JsonStore(home, cache_records=0)
        await store.open()
        records = {}
        for i, agent_id in enumerate(many):
            records[agent_id] = make_agent(
                agent_id,
                createdAt=stamp(i),
                lastStatus="running" if i % 20 == 3 else "closed",
                labels={"paseo.metadata": "title"} if i % 30 == 7 else {},
            )
            assert await store.agents.insert(records[agent_id])
        await store.close()
        # Reopened: the facets are built by the bulk load as well as by writes.
        store = JsonStore(home, cache_records=0)
        await store.open()
        # The index object is replaced as the durable file's rows load after open.
        await store.agents.settled()

        def expected(flt: AgentFilter, *, newest_first: bool) -> list[str]:
            rows = store.agents.files.index.rows
            keys = sorted((r.createdAt, r.id) for r in rows.values() if r.matches(flt))
            ids = [key[1] for key in keys]
            return ids[::-1] if newest_first else ids

        running = AgentFilter(statuses=frozenset({"running", "error"}), include_archived=True)
        titled = AgentFilter(labels={"paseo.metadata": "title"}, include_archived=True)
        both = AgentFilter(statuses=frozenset({"running"}), labels={"paseo.metadata": "title"})
        index = store.agents.files.index
        assert agent_candidates(index, running) == {
            a for a in many if records[a].lastStatus == "running"
        }
        for flt in (running, titled, both):
            for newest_first in (False, True):
                assert await pages(store, flt, newest_first=newest_first) == expected(
                    flt, newest_first=newest_first
                )
            assert await store.agents.count(flt) == len(expected(flt, newest_first=False))
        assert len(await pages(store, titled, newest_first=False)) == 4
        assert await pages(store, both, newest_first=False) == []
        # Closed agents are most rows: listing them walks the index, with the same result.
        closed = AgentFilter(statuses=frozenset({"closed"}))
        assert agent_candidates(index, closed) is None
        closed_titled = AgentFilter(statuses=closed.statuses, labels=titled.labels)
        # Resting agents are no facet: their labels narrow the walk instead.
        assert agent_candidates(index, closed_titled) == {a for a in many if records[a].labels}
        assert await pages(store, closed_titled, newest_first=True) == expected(
            closed_titled, newest_first=True
        )
        assert await pages(store, closed, newest_first=False) == expected(
            closed, newest_first=False
        )

        await store.agents.update(
            many[3], {"lastStatus": "closed", "labels": {"paseo.metadata": "title"}}
        )
        await store.agents.update(many[0], {"lastStatus": "running"})
        assert await store.agents.delete(many[7])
        for flt in (running, titled, both):
            assert await pages(store, flt, newest_first=False) == expected(flt, newest_first=False)
        assert many[3] in await pages(store, titled, newest_first=False)
        assert many[3] not in await pages(store, running, newest_first=False)
        assert many[7] not in index.having(("paseo.metadata", "title"))
        await store.close()

    asyncio.run(main())
