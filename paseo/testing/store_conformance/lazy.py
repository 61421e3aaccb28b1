"""Reading records back from disk, and the agent lookups the kernel names agents by.

A driver may keep only an index in memory and read full records on demand (the JSON driver
does, with a bounded cache; its suite also runs with no cache at all): every record read back
must equal what was written, whichever way it was last written and however often it left the
cache. The kernel lists agents newest first and resolves an agent by an id prefix or a title
through the store, so those are part of the contract too.
"""

from __future__ import annotations

import functools
from typing import Any

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentRecord, ScheduleRecord, dump_record
from paseo_hookspecs.store import AgentFilter, Page

from paseo.testing.store_conformance.base import StoreSuite, store_test
from paseo.testing.store_conformance.reading import collect_pages
from paseo.testing.store_conformance.records import (
    _agent,
    _rng,
    agent_data,
    iso,
    schedule_data,
)


class LazyReadTests(StoreSuite):
    """Records read back from disk; newest-first listing; id-prefix and title filters."""

    @store_test
    async def test_records_read_back_equal_what_was_written(self, store: Store) -> None:
        """Many agents and schedules, half of them updated: each ``get``, each listing and a
        reopened store return exactly the last version written."""
        agents: dict[str, dict[str, Any]] = {}
        schedules: dict[str, dict[str, Any]] = {}
        for i in range(30):
            data = agent_data(created_at=iso(i), cwd=f"/work/dir-{i % 3}", title=f"agent {i}")
            agents[data["id"]] = data
            assert await store.agents.insert(_agent(data))
            plan = schedule_data(created_at=iso(i))
            schedules[plan["id"]] = plan
            assert await store.schedules.insert(ScheduleRecord.model_validate(plan))
        for i, agent_id in enumerate(list(agents)[::2]):
            stored = await store.agents.update(agent_id, {"title": f"renamed {i}"})
            agents[agent_id] = dump_record(stored)
        for schedule_id in list(schedules)[::2]:
            stored_plan = await store.schedules.update(schedule_id, {"status": "paused"})
            schedules[schedule_id] = dump_record(stored_plan)

        async def check(opened: Store) -> None:
            for agent_id, data in agents.items():
                got = await opened.agents.get(agent_id)
                assert got is not None
                assert dump_record(got) == data
            listed = await collect_pages(
                lambda cursor: opened.agents.list(
                    AgentFilter(include_archived=True), cursor=cursor, limit=7
                )
            )
            assert {a.id: dump_record(a) for a in listed} == agents
            for schedule_id, plan in schedules.items():
                got_plan = await opened.schedules.get(schedule_id)
                assert got_plan is not None
                assert dump_record(got_plan) == plan
            paused = await collect_pages(
                lambda cursor: opened.schedules.list(status="paused", cursor=cursor, limit=4)
            )
            assert {s.id for s in paused} == set(list(schedules)[::2])

        await check(store)
        await check(await self.reopen(store))

    @store_test
    async def test_agent_list_newest_first(self, store: Store) -> None:
        """``newest_first`` reverses the order; its pages chain backwards to the oldest."""
        rng = _rng(11)
        records = [agent_data(created_at=iso(i // 2)) for i in range(15)]
        for record in rng.sample(records, len(records)):
            assert await store.agents.insert(_agent(record))
        expected = [r["id"] for r in sorted(records, key=lambda r: (r["createdAt"], r["id"]))]
        expected.reverse()
        for limit in (1, 4, 15, 16):
            walked = await collect_pages(functools.partial(self._newest_first, store, limit))
            assert [a.id for a in walked] == expected

    @staticmethod
    async def _newest_first(store: Store, limit: int, cursor: str | None) -> Page[AgentRecord]:
        return await store.agents.list(cursor=cursor, limit=limit, newest_first=True)

    @store_test
    async def test_agent_filter_by_id_prefix_and_title(self, store: Store) -> None:
        """``id_prefix`` matches ids ignoring case; ``title`` matches a title exactly."""
        first = agent_data("abcdef01-0000-4000-8000-000000000001", title="fix the build")
        second = agent_data("abcdef02-0000-4000-8000-000000000002", title="Fix the build")
        third = agent_data("0bcdef03-0000-4000-8000-000000000003", without=["title"])
        for data in (first, second, third):
            assert await store.agents.insert(_agent(data))

        async def ids(flt: AgentFilter) -> list[str]:
            listed = (await store.agents.list(flt)).items
            assert await store.agents.count(flt) == len(listed)
            return [a.id for a in listed]

        assert await ids(AgentFilter(id_prefix="ABCDEF")) == [first["id"], second["id"]]
        assert await ids(AgentFilter(id_prefix="abcdef02")) == [second["id"]]
        assert await ids(AgentFilter(id_prefix="ffff")) == []
        assert await ids(AgentFilter(title="fix the build")) == [first["id"]]
        assert await ids(AgentFilter(title="fix")) == []
