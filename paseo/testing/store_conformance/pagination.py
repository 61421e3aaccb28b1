"""Pages stay stable while rows are inserted and deleted."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    ProjectRecord,
    ScheduleRecord,
    WorkspaceRecord,
)
from paseo_hookspecs.store import Page

from paseo.testing.store_conformance.base import StoreSuite, store_test
from paseo.testing.store_conformance.records import (
    _agent,
    _rng,
    agent_data,
    iso,
    project_data,
    schedule_data,
    workspace_data,
)


class PaginationStabilityTests(StoreSuite):
    """Pages stay stable while rows are inserted and deleted."""

    async def _walk_while_mutating(
        self,
        *,
        list_page: Callable[[str | None], Awaitable[Page[Any]]],
        key: Callable[[Any], str],
        stable: list[str],
        volatile: list[str],
        insert_one: Callable[[int], Awaitable[str]],
        delete_one: Callable[[str], Awaitable[bool]],
        order_key: Callable[[Any], Any] | None,
        seed: int,
    ) -> None:
        """Walk every page; between pages insert rows and delete rows (sometimes the cursor row
        itself). Rows present throughout must each appear exactly once; no row may appear twice;
        when the listing has a sort key it must never go backwards."""
        rng = _rng(seed)
        stable_set = set(stable)
        volatile = list(volatile)
        seen: list[str] = []
        last_order: Any = None
        cursor: str | None = None
        for step in range(10_000):
            page = await list_page(cursor)
            for item in page.items:
                seen.append(key(item))
                if order_key is not None:
                    current = order_key(item)
                    assert last_order is None or current > last_order, (
                        f"listing went backwards at {current!r} after {last_order!r} (seed {seed})"
                    )
                    last_order = current
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
            for _ in range(3):
                volatile.append(await insert_one(step))
            for _ in range(2):
                if volatile:
                    await delete_one(volatile.pop(rng.randrange(len(volatile))))
            if step % 3 == 0 and page.items:
                # Delete the row the cursor names: it was seen, so it leaves the stable set.
                cursor_row = key(page.items[-1])
                stable_set.discard(cursor_row)
                if cursor_row in volatile:
                    volatile.remove(cursor_row)
                await delete_one(cursor_row)
        else:
            raise AssertionError("walk did not end")
        duplicates = {k for k in seen if seen.count(k) > 1}
        assert not duplicates, f"rows repeated across pages: {sorted(duplicates)} (seed {seed})"
        missing = stable_set - set(seen)
        assert not missing, f"rows skipped across pages: {sorted(missing)} (seed {seed})"

    @store_test
    async def test_agent_pagination_is_stable_under_writes(self, store: Store) -> None:
        rng = _rng(21)
        ids = []
        for i in range(90):
            data = agent_data(created_at=iso(i // 2), cwd=f"/src/d{i % 5}")
            await store.agents.insert(_agent(data))
            ids.append(data["id"])

        async def insert_one(_step: int) -> str:
            data = agent_data(created_at=iso(rng.randrange(0, 46)))
            await store.agents.insert(_agent(data))
            return str(data["id"])

        await self._walk_while_mutating(
            list_page=lambda c: store.agents.list(cursor=c, limit=7),
            key=lambda a: a.id,
            stable=ids[::3] + ids[1::3],
            volatile=ids[2::3],
            insert_one=insert_one,
            delete_one=store.agents.delete,
            order_key=lambda a: (a.createdAt, a.id),
            seed=21,
        )

    @store_test
    async def test_schedule_pagination_is_stable_under_writes(self, store: Store) -> None:
        rng = _rng(22)
        ids = []
        for i in range(60):
            data = schedule_data(created_at=iso(i // 2))
            await store.schedules.insert(ScheduleRecord.model_validate(data))
            ids.append(data["id"])

        async def insert_one(_step: int) -> str:
            data = schedule_data(created_at=iso(rng.randrange(0, 31)))
            await store.schedules.insert(ScheduleRecord.model_validate(data))
            return str(data["id"])

        await self._walk_while_mutating(
            list_page=lambda c: store.schedules.list(cursor=c, limit=6),
            key=lambda s: s.id,
            stable=ids[::2],
            volatile=ids[1::2],
            insert_one=insert_one,
            delete_one=store.schedules.delete,
            order_key=lambda s: (s.createdAt, s.id),
            seed=22,
        )

    @store_test
    async def test_project_pagination_is_stable_under_writes(self, store: Store) -> None:
        ids = []
        for i in range(60):
            data = project_data(root=f"/src/p{i}")
            await store.projects.insert_if_root_free(ProjectRecord.model_validate(data))
            ids.append(data["projectId"])
        counter = iter(range(10_000))

        async def insert_one(_step: int) -> str:
            data = project_data(root=f"/src/new{next(counter)}")
            await store.projects.insert_if_root_free(ProjectRecord.model_validate(data))
            return str(data["projectId"])

        await self._walk_while_mutating(
            list_page=lambda c: store.projects.list(cursor=c, limit=6),
            key=lambda p: p.projectId,
            stable=ids[::2],
            volatile=ids[1::2],
            insert_one=insert_one,
            delete_one=store.projects.delete,
            order_key=None,
            seed=23,
        )

    @store_test
    async def test_workspace_pagination_is_stable_under_writes(self, store: Store) -> None:
        ids = []
        for i in range(60):
            data = workspace_data(cwd=f"/src/w{i}")
            await store.workspaces.insert(WorkspaceRecord.model_validate(data))
            ids.append(data["workspaceId"])

        async def insert_one(_step: int) -> str:
            data = workspace_data()
            await store.workspaces.insert(WorkspaceRecord.model_validate(data))
            return str(data["workspaceId"])

        await self._walk_while_mutating(
            list_page=lambda c: store.workspaces.list(cursor=c, limit=6),
            key=lambda w: w.workspaceId,
            stable=ids[::2],
            volatile=ids[1::2],
            insert_one=insert_one,
            delete_one=store.workspaces.delete,
            order_key=None,
            seed=24,
        )
