"""Concurrent writers: compare-and-set loses no update, idempotent creates create once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    ProjectRecord,
    ScheduleRecord,
    WorkspaceRecord,
    dump_record,
    label_identity,
    new_agent_id,
)

from paseo.testing.store_conformance.base import StoreSuite, store_test
from paseo.testing.store_conformance.records import (
    _agent,
    _entries,
    _rng,
    agent_data,
    iso,
    project_data,
    schedule_data,
    workspace_data,
)


class ConcurrencyTests(StoreSuite):
    """Concurrent writers: compare-and-set loses no update, idempotent creates create once."""

    async def _cas_increment(
        self,
        read: Callable[[], Awaitable[str | None]],
        write: Callable[[str, str | None], Awaitable[Any]],
    ) -> int:
        """Increment a counter held as a string field with a compare-and-set retry loop;
        returns the number of conflicts met."""
        conflicts = 0
        for _ in range(self.concurrency * 20):
            current = await read()
            try:
                await write(str(int(current or "0") + 1), current)
            except Conflict:
                conflicts += 1
                await asyncio.sleep(0)
                continue
            return conflicts
        raise AssertionError("a compare-and-set writer never succeeded")

    @store_test
    async def test_concurrent_compare_and_set_loses_no_update(self, store: Store) -> None:
        """Many writers incrementing one field of each repository with CAS retry loops."""
        agent = agent_data(title="0")
        await store.agents.insert(_agent(agent))
        schedule = schedule_data(name="0")
        await store.schedules.insert(ScheduleRecord.model_validate(schedule))
        project = project_data(customName="0")
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(project))
        workspace = workspace_data(title="0")
        await store.workspaces.insert(WorkspaceRecord.model_validate(workspace))

        async def agent_title() -> str | None:
            got = await store.agents.get(agent["id"])
            assert got is not None
            return got.title

        async def schedule_name() -> str | None:
            got = await store.schedules.get(schedule["id"])
            assert got is not None
            return got.name

        async def project_name() -> str | None:
            got = await store.projects.get(project["projectId"])
            assert got is not None
            return got.customName

        async def workspace_title() -> str | None:
            got = await store.workspaces.get(workspace["workspaceId"])
            assert got is not None
            return got.title

        writers = [
            self._cas_increment(
                agent_title,
                lambda new, old: store.agents.update(
                    agent["id"], {"title": new}, expect={"title": old}
                ),
            )
            for _ in range(self.concurrency)
        ]
        small = max(self.concurrency // 4, 2)
        for _ in range(small):
            writers.append(
                self._cas_increment(
                    schedule_name,
                    lambda new, old: store.schedules.update(
                        schedule["id"], {"name": new}, expect={"name": old}
                    ),
                )
            )
            writers.append(
                self._cas_increment(
                    project_name,
                    lambda new, old: store.projects.update(
                        project["projectId"], {"customName": new}, expect={"customName": old}
                    ),
                )
            )
            writers.append(
                self._cas_increment(
                    workspace_title,
                    lambda new, old: store.workspaces.update(
                        workspace["workspaceId"], {"title": new}, expect={"title": old}
                    ),
                )
            )
        await asyncio.gather(*writers)
        for _ in range(2):
            assert await agent_title() == str(self.concurrency)
            assert await schedule_name() == str(small)
            assert await project_name() == str(small)
            assert await workspace_title() == str(small)
            store = await self.reopen(store)

    @store_test
    async def test_concurrent_updates_of_distinct_fields_are_all_kept(self, store: Store) -> None:
        """Unconditional updates of different fields must not overwrite each other."""
        agents = [agent_data(created_at=iso(i)) for i in range(5)]
        for data in agents:
            await store.agents.insert(_agent(data))
        n = self.concurrency
        await asyncio.gather(
            *(store.agents.update(agents[i % 5]["id"], {f"field{i}": i}) for i in range(n))
        )
        store = await self.reopen(store)
        for k, data in enumerate(agents):
            got = await store.agents.get(data["id"])
            assert got is not None
            dumped = dump_record(got)
            for i in range(k, n, 5):
                assert dumped.get(f"field{i}") == i, f"update of field{i} was lost"

    @store_test
    async def test_concurrent_inserts_of_one_id_insert_once(self, store: Store) -> None:
        agent_id = new_agent_id()
        results = await asyncio.gather(
            *(
                store.agents.insert(_agent(agent_data(agent_id, title=f"writer {i}")))
                for i in range(self.concurrency)
            )
        )
        assert results.count(True) == 1
        winner = results.index(True)
        store = await self.reopen(store)
        got = await store.agents.get(agent_id)
        assert got is not None
        assert got.title == f"writer {winner}"
        assert await store.agents.count() == 1

    @store_test
    async def test_concurrent_opens_of_one_root_create_one_project(self, store: Store) -> None:
        root = "/Users/alice/code/race"
        candidates = [project_data(root=root) for _ in range(self.concurrency)]
        results = await asyncio.gather(
            *(
                store.projects.insert_if_root_free(ProjectRecord.model_validate(c))
                for c in candidates
            )
        )
        assert [created for _, created in results].count(True) == 1
        winner = next(stored.projectId for stored, created in results if created)
        assert {stored.projectId for stored, _ in results} == {winner}
        store = await self.reopen(store)
        listed = (await store.projects.list(include_archived=True)).items
        assert [p.projectId for p in listed] == [winner]

    @store_test
    async def test_concurrent_label_creates_of_one_identity_create_one(self, store: Store) -> None:
        spellings = ["Needs review", "needs review", " NEEDS  REVIEW", "Needs Review "]
        outcomes = await asyncio.gather(
            *(
                store.labels.create(spellings[i % len(spellings)], "red")
                for i in range(self.concurrency)
            ),
            return_exceptions=True,
        )
        successes = [o for o in outcomes if not isinstance(o, BaseException)]
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(successes) == 1
        assert all(isinstance(f, Conflict) for f in failures), failures
        assert len(await store.labels.list()) == 1

    @store_test
    async def test_concurrent_timeline_appends_with_retry(self, store: Store) -> None:
        agent_id = await self._agent_with_timeline(store, [])

        async def append_next(writer: int) -> None:
            for _ in range(self.concurrency * 20):
                last = await store.timeline.last(agent_id)
                seq = 0 if last is None else last.seq + 1
                try:
                    await store.timeline.append(
                        _entries(agent_id, [seq], source=f"writer-{writer}")
                    )
                except Conflict:
                    await asyncio.sleep(0)
                    continue
                return
            raise AssertionError("a timeline writer never succeeded")

        await asyncio.gather(*(append_next(i) for i in range(self.concurrency)))
        store = await self.reopen(store)
        entries = await store.timeline.read(agent_id)
        assert [e.seq for e in entries] == list(range(self.concurrency))
        writers = [dump_record(e)["source"] for e in entries]
        assert sorted(writers) == sorted(f"writer-{i}" for i in range(self.concurrency))

    @store_test
    async def test_concurrent_label_writes_keep_assignments_consistent(self, store: Store) -> None:
        """Assignments racing renames and deletes never leave a name outside the catalog."""
        names = [f"Label {i}" for i in range(6)]
        for name in names:
            await store.labels.create(name, "sky")
        ws = await self._labelled_workspaces(store, [[] for _ in range(20)])
        rng = _rng(11)

        async def assign(w: str, name: str, t: int) -> None:
            # NotFound: renamed or deleted first, a legitimate outcome of the race.
            with contextlib.suppress(NotFound):
                await store.labels.assign(w, [name], now=iso(t))

        operations: list[Coroutine[Any, Any, Any]] = []
        for t in range(self.concurrency):
            operations.append(assign(rng.choice(ws), rng.choice(names), 1000 + t))
        operations.append(store.labels.edit("Label 0", new_name="Renamed 0", now=iso(2000)))
        operations.append(store.labels.edit("Label 1", new_name="Renamed 1", now=iso(2001)))
        operations.append(store.labels.delete("Label 2", now=iso(2002)))
        rng.shuffle(operations)
        await asyncio.gather(*operations)

        async def check(current: Store) -> None:
            catalog = {d.name for d in await current.labels.list()}
            assert catalog == {"Renamed 0", "Renamed 1", "Label 3", "Label 4", "Label 5"}
            for w in ws:
                labels = await self._labels_of(current, w)
                assert set(labels) <= catalog, (w, labels)
                assert len({label_identity(n) for n in labels}) == len(labels), labels

        await check(store)
        store = await self.reopen(store)
        await check(store)
