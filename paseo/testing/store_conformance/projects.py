"""The ``projects`` repository."""

from __future__ import annotations

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    ProjectRecord,
    dump_record,
    new_project_id,
)

from paseo.testing.store_conformance.base import StoreSuite, _raises, store_test
from paseo.testing.store_conformance.reading import collect_pages
from paseo.testing.store_conformance.records import (
    iso,
    project_data,
)


class ProjectTests(StoreSuite):
    """The ``projects`` repository."""

    @store_test
    async def test_project_round_trips_every_field(self, store: Store) -> None:
        full = project_data(root="/Users/alice/code/one")
        legacy = project_data(
            "remote:github.com/acme/two",
            root="/Users/alice/code/two",
            created_at=iso(1),
            projectKey=None,
            customName=None,
            customIconRevision=None,
            without=["sortHint"],
        )
        for data in (full, legacy):
            stored, created = await store.projects.insert_if_root_free(
                ProjectRecord.model_validate(data)
            )
            assert created
            assert dump_record(stored) == data
        for _ in range(2):
            for data in (full, legacy):
                got = await store.projects.get(data["projectId"])
                assert got is not None
                assert dump_record(got) == data
            listed = (await store.projects.list()).items
            assert [dump_record(p) for p in listed] == [full, legacy]
            store = await self.reopen(store)

    @store_test
    async def test_project_insert_if_root_free_is_idempotent(self, store: Store) -> None:
        first = project_data(root="/Users/alice/code/api")
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(first)
        )
        assert created
        again = project_data(root="/Users/alice/code/api", customName="Other")
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(again)
        )
        assert not created
        assert dump_record(stored) == first
        assert await store.projects.get(again["projectId"]) is None
        other_root = project_data(root="/Users/alice/code/api/sub")
        _, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(other_root)
        )
        assert created
        store = await self.reopen(store)
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(project_data(root="/Users/alice/code/api"))
        )
        assert not created
        assert stored.projectId == first["projectId"]
        assert len((await store.projects.list()).items) == 2

    @store_test
    async def test_project_archived_root_does_not_block_a_fresh_project(self, store: Store) -> None:
        old = project_data(root="/Users/alice/code/api")
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(old))
        await store.projects.update(old["projectId"], {"archivedAt": iso(10)})
        fresh = project_data(root="/Users/alice/code/api", created_at=iso(20))
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(fresh)
        )
        assert created
        assert stored.projectId == fresh["projectId"]
        # The archived project is untouched (not resurrected) and the fresh one is now active.
        archived = await store.projects.get(old["projectId"])
        assert archived is not None
        assert archived.archivedAt == iso(10)
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(project_data(root="/Users/alice/code/api"))
        )
        assert not created
        assert stored.projectId == fresh["projectId"]
        assert [p.projectId for p in (await store.projects.list()).items] == [fresh["projectId"]]
        listed = (await store.projects.list(include_archived=True)).items
        assert [p.projectId for p in listed] == [old["projectId"], fresh["projectId"]]

    @store_test
    async def test_project_list_order_filter_and_pagination(self, store: Store) -> None:
        # Insertion order, not creation time, orders the registry.
        records = [
            project_data(
                root=f"/src/p{i}",
                created_at=iso(100 - i),
                archived_at=iso(200) if i % 4 == 1 else None,
            )
            for i in range(13)
        ]
        for record in records:
            await store.projects.insert_if_root_free(ProjectRecord.model_validate(record))
        await store.projects.update(records[0]["projectId"], {"customName": "Renamed"})
        all_ids = [r["projectId"] for r in records]
        active_ids = [r["projectId"] for r in records if r["archivedAt"] is None]
        walked = await collect_pages(
            lambda c: store.projects.list(include_archived=True, cursor=c, limit=3)
        )
        assert [p.projectId for p in walked] == all_ids
        walked = await collect_pages(lambda c: store.projects.list(cursor=c, limit=2))
        assert [p.projectId for p in walked] == active_ids
        assert await store.projects.delete(records[2]["projectId"]) is True
        late = project_data(root="/src/late", created_at=iso(0))
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(late))
        store = await self.reopen(store)
        walked = await collect_pages(
            lambda c: store.projects.list(include_archived=True, cursor=c, limit=5)
        )
        expected = [i for i in all_ids if i != records[2]["projectId"]] + [late["projectId"]]
        assert [p.projectId for p in walked] == expected
        await _raises(InvalidParams, store.projects.list(cursor="\u2603 garbage"))

    @store_test
    async def test_project_update_and_delete(self, store: Store) -> None:
        data = project_data()
        project_id = data["projectId"]
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(data))
        stored = await store.projects.update(
            project_id,
            {"kind": "non_git", "projectKey": None, "updatedAt": iso(5)},
            expect={"kind": "git", "archivedAt": None},
        )
        assert (stored.kind, stored.projectKey) == ("non_git", None)
        assert "projectKey" in dump_record(stored)
        before = dump_record(stored)
        await _raises(
            Conflict, store.projects.update(project_id, {"kind": "git"}, expect={"kind": "git"})
        )
        await _raises(InvalidParams, store.projects.update(project_id, {"kind": "svn"}))
        await _raises(
            InvalidParams, store.projects.update(project_id, {"customName": "x", "rootPath": 3})
        )
        await _raises(NotFound, store.projects.update(new_project_id(), {"customName": "x"}))
        got = await store.projects.get(project_id)
        assert got is not None
        assert dump_record(got) == before
        assert await store.projects.delete(project_id) is True
        assert await store.projects.delete(project_id) is False
        assert await store.projects.get(project_id) is None
        store = await self.reopen(store)
        assert await store.projects.get(project_id) is None
