"""The ``workspaces`` repository."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    WorkspaceRecord,
    dump_record,
    new_workspace_id,
)

from paseo.testing.store_conformance.base import StoreSuite, _raises, store_test
from paseo.testing.store_conformance.reading import collect_pages
from paseo.testing.store_conformance.records import (
    iso,
    workspace_data,
)


class WorkspaceTests(StoreSuite):
    """The ``workspaces`` repository."""

    @store_test
    async def test_workspace_round_trips_every_field(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Needs review", "red")
        full = workspace_data(labels=["Backend", "Needs review"])
        minimal = workspace_data(
            "/Users/alice/code/legacy-path-id",
            cwd="/Users/alice/code/legacy",
            created_at=iso(1),
            kind="directory",
            title=None,
            branch=None,
            worktreeRoot=None,
            baseBranch=None,
            isPaseoOwnedWorktree=False,
            mainRepoRoot=None,
            pinnedAt=None,
            without=["untrustedSource", "setupState"],
        )
        for data in (full, minimal):
            assert await store.workspaces.insert(WorkspaceRecord.model_validate(data))
        for _ in range(2):
            for data in (full, minimal):
                got = await store.workspaces.get(data["workspaceId"])
                assert got is not None
                assert dump_record(got) == data
            listed = (await store.workspaces.list()).items
            assert [dump_record(w) for w in listed] == [full, minimal]
            store = await self.reopen(store)

    @store_test
    async def test_workspace_insert_get_delete(self, store: Store) -> None:
        data = workspace_data(title="first")
        assert await store.workspaces.get(data["workspaceId"]) is None
        assert await store.workspaces.insert(WorkspaceRecord.model_validate(data)) is True
        clash = workspace_data(data["workspaceId"], title="second")
        assert await store.workspaces.insert(WorkspaceRecord.model_validate(clash)) is False
        got = await store.workspaces.get(data["workspaceId"])
        assert got is not None
        assert got.title == "first"
        assert await store.workspaces.delete(data["workspaceId"]) is True
        assert await store.workspaces.delete(data["workspaceId"]) is False
        store = await self.reopen(store)
        assert await store.workspaces.get(data["workspaceId"]) is None

    @store_test
    async def test_workspace_list_filters_and_pagination(self, store: Store) -> None:
        records = []
        for i in range(14):
            records.append(
                workspace_data(
                    project_id=f"prj_{i % 3:016x}",
                    cwd=f"/src/dir-{i % 4}",
                    created_at=iso(50 - i),
                    archived_at=iso(99) if i % 5 == 0 else None,
                )
            )
        for record in records:
            await store.workspaces.insert(WorkspaceRecord.model_validate(record))

        async def ids(**kwargs: Any) -> list[str]:
            walked = await collect_pages(
                lambda c: store.workspaces.list(cursor=c, limit=3, **kwargs)
            )
            return [w.workspaceId for w in walked]

        def expected(pred: Callable[[dict[str, Any]], bool]) -> list[str]:
            return [r["workspaceId"] for r in records if pred(r)]

        assert await ids(include_archived=True) == expected(lambda r: True)
        assert await ids() == expected(lambda r: r["archivedAt"] is None)
        prj = f"prj_{1:016x}"
        assert await ids(project_id=prj) == expected(
            lambda r: r["projectId"] == prj and r["archivedAt"] is None
        )
        assert await ids(project_id=prj, include_archived=True) == expected(
            lambda r: r["projectId"] == prj
        )
        assert await ids(cwd="/src/dir-2") == expected(
            lambda r: r["cwd"] == "/src/dir-2" and r["archivedAt"] is None
        )
        assert await ids(cwd="/src/dir-0", project_id=f"prj_{0:016x}", include_archived=True) == (
            expected(lambda r: r["cwd"] == "/src/dir-0" and r["projectId"] == f"prj_{0:016x}")
        )
        assert await ids(cwd="/src/dir") == []
        await _raises(InvalidParams, store.workspaces.list(cursor="\u2603 garbage"))

    @store_test
    async def test_workspace_update_compare_and_set(self, store: Store) -> None:
        data = workspace_data()
        workspace_id = data["workspaceId"]
        await store.workspaces.insert(WorkspaceRecord.model_validate(data))
        stored = await store.workspaces.update(
            workspace_id,
            {"branch": "main", "title": None, "untrustedSource": None, "updatedAt": iso(9)},
            expect={"branch": "fix/login", "archivedAt": None},
        )
        dumped = dump_record(stored)
        # ``title`` is nullable and always written; ``untrustedSource`` is omitted when unset.
        assert dumped["title"] is None
        assert "untrustedSource" not in dumped
        assert dumped["branch"] == "main"
        await _raises(
            Conflict,
            store.workspaces.update(workspace_id, {"branch": "x"}, expect={"branch": "fix/login"}),
        )
        await _raises(
            InvalidParams, store.workspaces.update(workspace_id, {"branch": "x", "kind": "vm"})
        )
        await _raises(NotFound, store.workspaces.update(new_workspace_id(), {"branch": "x"}))
        store = await self.reopen(store)
        got = await store.workspaces.get(workspace_id)
        assert got is not None
        assert dump_record(got) == dumped
