"""The ``agents`` repository."""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    AgentRecord,
    dump_record,
    new_agent_id,
)
from paseo_hookspecs.store import AgentFilter, Page

from paseo.testing.store_conformance.base import StoreSuite, _raises, store_test
from paseo.testing.store_conformance.reading import collect_pages
from paseo.testing.store_conformance.records import (
    _agent,
    _entries,
    _rng,
    agent_data,
    iso,
)


class AgentTests(StoreSuite):
    """The ``agents`` repository."""

    @store_test
    async def test_agent_round_trips_every_field(self, store: Store) -> None:
        """Every declared and unknown field survives insert, get, list and a restart."""
        full = agent_data()
        minimal = agent_data(
            without=[
                "workspaceId",
                "lastActivityAt",
                "lastUserMessageAt",
                "title",
                "lastModeId",
                "config",
                "runtimeInfo",
                "features",
                "persistence",
                "lastError",
                "requiresAttention",
                "attentionReason",
                "attentionTimestamp",
                "internal",
                "archivedAt",
                "owner",
                "titleManuallySet",
                "queuedPrompts",
            ],
            created_at=iso(1),
        )
        assert await store.agents.insert(_agent(full))
        assert await store.agents.insert(_agent(minimal))
        for _ in range(2):
            got = await store.agents.get(full["id"])
            assert got is not None
            assert dump_record(got) == full
            got_min = await store.agents.get(minimal["id"])
            assert got_min is not None
            assert dump_record(got_min) == minimal
            listed = (await store.agents.list()).items
            assert [dump_record(a) for a in listed] == [full, minimal]
            store = await self.reopen(store)

    @store_test
    async def test_agent_get_unknown_is_none(self, store: Store) -> None:
        assert await store.agents.get(new_agent_id()) is None
        assert await store.agents.delete(new_agent_id()) is False

    @store_test
    async def test_agent_insert_only_if_absent(self, store: Store) -> None:
        original = agent_data(title="first")
        assert await store.agents.insert(_agent(original)) is True
        duplicate = agent_data(original["id"], title="second", cwd="/elsewhere")
        assert await store.agents.insert(_agent(duplicate)) is False
        got = await store.agents.get(original["id"])
        assert got is not None
        assert dump_record(got) == original
        assert await store.agents.count() == 1
        store = await self.reopen(store)
        assert await store.agents.count() == 1
        got = await store.agents.get(original["id"])
        assert got is not None
        assert got.title == "first"

    @store_test
    async def test_agent_list_order_and_pagination(self, store: Store) -> None:
        """Listing is ordered by ``(createdAt, id)`` whatever the insertion order; pages chain."""
        rng = _rng(7)
        records = [agent_data(created_at=iso(i // 3), cwd=f"/work/dir-{i % 4}") for i in range(40)]
        for record in rng.sample(records, len(records)):
            assert await store.agents.insert(_agent(record))
        expected = [r["id"] for r in sorted(records, key=lambda r: (r["createdAt"], r["id"]))]
        assert [a.id for a in (await store.agents.list()).items] == expected
        for limit in (1, 6, 39, 40, 41):
            pages: list[Page[AgentRecord]] = []
            cursor: str | None = None
            for _ in range(100):
                page = await store.agents.list(cursor=cursor, limit=limit)
                assert len(page.items) <= limit
                pages.append(page)
                if page.next_cursor is None:
                    break
                assert page.items, "a page with a next cursor must not be empty"
                cursor = page.next_cursor
            assert [a.id for p in pages for a in p.items] == expected
            assert all(len(p.items) == limit for p in pages[:-1])

    @store_test
    async def test_agent_list_rejects_malformed_cursor(self, store: Store) -> None:
        await store.agents.insert(_agent(agent_data()))
        await _raises(InvalidParams, store.agents.list(cursor="not a cursor \u2603"))

    @store_test
    async def test_agent_filters_and_count(self, store: Store) -> None:
        """Every filter criterion alone and combined; ``count`` agrees with ``list``."""
        specs = [
            # (workspace, provider, status, labels, requiresAttention, archived)
            ("w1", "claude", "idle", {"team": "core"}, True, False),
            ("w1", "claude", "running", {"team": "core", "tier": "1"}, None, False),
            ("w1", "codex", "error", {}, False, False),
            ("w2", "claude", "idle", {"team": "web"}, True, True),
            ("w2", "codex", "closed", {"team": "core", "tier": "1"}, None, False),
            ("w3", "opencode", "initializing", {"tier": "1"}, True, False),
            ("w3", "claude", "idle", {"team": "core"}, None, True),
        ]
        ids: list[str] = []
        for i, (ws, provider, status, labels, attention, archived) in enumerate(specs):
            data = agent_data(
                workspace_id=ws,
                provider=provider,
                lastStatus=status,
                labels=labels,
                created_at=iso(i),
                archivedAt=iso(100) if archived else None,
                requiresAttention=attention,
                without=["requiresAttention"] if attention is None else [],
            )
            ids.append(data["id"])
            await store.agents.insert(_agent(data))

        async def matches(flt: AgentFilter) -> list[int]:
            listed = (await store.agents.list(flt)).items
            assert await store.agents.count(flt) == len(listed)
            return [ids.index(a.id) for a in listed]

        assert await matches(AgentFilter()) == [0, 1, 2, 4, 5]
        assert await matches(AgentFilter(include_archived=True)) == [0, 1, 2, 3, 4, 5, 6]
        assert await matches(AgentFilter(workspace_id="w1")) == [0, 1, 2]
        assert await matches(AgentFilter(workspace_id="w2", include_archived=True)) == [3, 4]
        assert await matches(AgentFilter(workspace_id="nope")) == []
        assert await matches(AgentFilter(provider="claude")) == [0, 1]
        assert await matches(AgentFilter(provider="claude", include_archived=True)) == [
            0,
            1,
            3,
            6,
        ]
        assert await matches(AgentFilter(statuses=frozenset({"idle"}))) == [0]
        assert await matches(AgentFilter(statuses=frozenset({"idle", "closed", "error"}))) == [
            0,
            2,
            4,
        ]
        assert await matches(AgentFilter(labels={"team": "core"})) == [0, 1, 4]
        assert await matches(AgentFilter(labels={"team": "core", "tier": "1"})) == [1, 4]
        assert await matches(AgentFilter(labels={"tier": "2"})) == []
        assert await matches(AgentFilter(requires_attention=True)) == [0, 5]
        # Absent ``requiresAttention`` means the agent does not need attention.
        assert await matches(AgentFilter(requires_attention=False)) == [1, 2, 4]
        assert await matches(
            AgentFilter(
                include_archived=True,
                workspace_id="w3",
                provider="claude",
                statuses=frozenset({"idle"}),
                labels={"team": "core"},
            )
        ) == [6]
        # Pages of a filtered listing chain over the filtered rows only.
        flt = AgentFilter(include_archived=True, provider="claude")
        walked = await collect_pages(lambda c: store.agents.list(flt, cursor=c, limit=1))
        assert [ids.index(a.id) for a in walked] == [0, 1, 3, 6]

    @store_test
    async def test_agent_filter_without_workspace(self, store: Store) -> None:
        """``without_workspace`` admits just the agents with no ``workspaceId``, archived ones
        included on request; stamping one takes it out, across a
        restart too."""
        placed = agent_data(workspace_id="w1", created_at=iso(0))
        absent = agent_data(created_at=iso(1), without=["workspaceId"])
        other = agent_data(created_at=iso(2), without=["workspaceId"])
        archived = agent_data(created_at=iso(3), without=["workspaceId"], archivedAt=iso(9))
        for data in (placed, absent, other, archived):
            await store.agents.insert(_agent(data))

        async def legacy(flt: AgentFilter) -> list[str]:
            listed = (await store.agents.list(flt)).items
            assert await store.agents.count(flt) == len(listed)
            return [a.id for a in listed]

        assert await legacy(AgentFilter(without_workspace=True)) == [absent["id"], other["id"]]
        every = AgentFilter(without_workspace=True, include_archived=True)
        assert await legacy(every) == [absent["id"], other["id"], archived["id"]]
        await store.agents.update(absent["id"], {"workspaceId": "w2"})
        assert await legacy(every) == [other["id"], archived["id"]]
        store = await self.reopen(store)
        assert await legacy(every) == [other["id"], archived["id"]]
        assert await legacy(AgentFilter(without_workspace=True, workspace_id="w1")) == []

    @store_test
    async def test_agent_update_applies_changes(self, store: Store) -> None:
        data = agent_data(without=["lastError"])
        agent_id = data["id"]
        await store.agents.insert(_agent(data))
        new_config = {"model": "claude-opus-4", "futureConfigField": {"x": [1]}}
        stored = await store.agents.update(
            agent_id,
            {
                "title": "Renamed",
                "lastStatus": "running",
                "updatedAt": iso(50),
                "config": new_config,
                "labels": {"team": "web"},
                "queuedPrompts": [],
                "brandNewField": {"nested": True},
                # Optional, never-null field: ``None`` removes it.
                "requiresAttention": None,
                "lastError": "boom",
            },
        )
        expected = dict(data)
        expected.update(
            title="Renamed",
            lastStatus="running",
            updatedAt=iso(50),
            config=new_config,
            labels={"team": "web"},
            queuedPrompts=[],
            brandNewField={"nested": True},
            lastError="boom",
        )
        del expected["requiresAttention"]
        assert dump_record(stored) == expected
        got = await store.agents.get(agent_id)
        assert got is not None
        assert dump_record(got) == expected
        # A nullable field set to None holds no value afterwards.
        cleared = await store.agents.update(agent_id, {"lastError": None, "title": None})
        assert cleared.lastError is None
        assert cleared.title is None
        store = await self.reopen(store)
        got = await store.agents.get(agent_id)
        assert got is not None
        assert dump_record(got) == dump_record(cleared)

    @store_test
    async def test_agent_update_compare_and_set(self, store: Store) -> None:
        data = agent_data(title="v1", without=["lastError", "archivedAt"])
        agent_id = data["id"]
        await store.agents.insert(_agent(data))
        # Success: every expected field holds (None matches absent).
        stored = await store.agents.update(
            agent_id,
            {"title": "v2"},
            expect={"title": "v1", "lastError": None, "archivedAt": None, "labels": data["labels"]},
        )
        assert stored.title == "v2"
        # Failure: one mismatching field is enough, and nothing is written.
        before = await store.agents.get(agent_id)
        assert before is not None
        mismatches: list[dict[str, Any]] = [
            {"title": "v1"},
            {"title": "v2", "lastStatus": "running"},
            {"lastError": "something"},
            {"title": None},
            {"labels": {}},
        ]
        for expect in mismatches:
            await _raises(
                Conflict,
                store.agents.update(
                    agent_id, {"title": "v3", "lastStatus": "error"}, expect=expect
                ),
            )
        after = await store.agents.get(agent_id)
        assert after is not None
        assert dump_record(after) == dump_record(before)
        store = await self.reopen(store)
        after = await store.agents.get(agent_id)
        assert after is not None
        assert dump_record(after) == dump_record(before)

    @store_test
    async def test_agent_update_unknown_is_not_found(self, store: Store) -> None:
        await _raises(NotFound, store.agents.update(new_agent_id(), {"title": "x"}))
        await _raises(
            NotFound, store.agents.update(new_agent_id(), {"title": "x"}, expect={"title": None})
        )
        assert await store.agents.count(AgentFilter(include_archived=True)) == 0

    @store_test
    async def test_agent_update_invalid_writes_nothing(self, store: Store) -> None:
        data = agent_data()
        await store.agents.insert(_agent(data))
        for changes in (
            {"title": "ok", "lastStatus": "exploded"},
            {"title": "ok", "createdAt": 12},
            {"title": "ok", "provider": None},
            {"title": "ok", "runtimeInfo": {"sessionId": "no provider"}},
            {"title": "ok", "features": [{"type": "slider"}]},
        ):
            await _raises(InvalidParams, store.agents.update(data["id"], changes))
        got = await store.agents.get(data["id"])
        assert got is not None
        assert dump_record(got) == data
        store = await self.reopen(store)
        got = await store.agents.get(data["id"])
        assert got is not None
        assert dump_record(got) == data

    @store_test
    async def test_agent_update_of_cwd_persists_once(self, store: Store) -> None:
        """Changing the field a driver may place the record by leaves exactly one record."""
        data = agent_data(cwd="/Users/alice/code/old")
        await store.agents.insert(_agent(data))
        await store.agents.update(data["id"], {"cwd": "/Users/alice/code/new"})
        store = await self.reopen(store)
        assert await store.agents.count(AgentFilter(include_archived=True)) == 1
        got = await store.agents.get(data["id"])
        assert got is not None
        assert got.cwd == "/Users/alice/code/new"

    @store_test
    async def test_agent_delete_removes_agent_and_timeline(self, store: Store) -> None:
        keep = agent_data(created_at=iso(0))
        gone = agent_data(created_at=iso(1))
        for data in (keep, gone):
            await store.agents.insert(_agent(data))
            await store.timeline.append(_entries(data["id"], range(3)))
        assert await store.agents.delete(gone["id"]) is True
        assert await store.agents.delete(gone["id"]) is False
        assert await store.agents.get(gone["id"]) is None
        assert await store.timeline.read(gone["id"]) == []
        assert await store.timeline.last(gone["id"]) is None
        store = await self.reopen(store)
        assert await store.agents.get(gone["id"]) is None
        assert await store.timeline.read(gone["id"]) == []
        assert [a.id for a in (await store.agents.list()).items] == [keep["id"]]
        assert len(await store.timeline.read(keep["id"])) == 3
