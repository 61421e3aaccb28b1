"""The ``labels`` repository: the catalog and its assignment rewrites."""

from __future__ import annotations

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    dump_record,
    new_workspace_id,
    normalize_label_name,
)

from paseo.testing.store_conformance.base import StoreSuite, _raises, store_test
from paseo.testing.store_conformance.records import (
    iso,
)


class LabelTests(StoreSuite):
    """The ``labels`` repository: the catalog and its assignment rewrites."""

    @store_test
    async def test_label_create_normalizes_and_keeps_order(self, store: Store) -> None:
        created = await store.labels.create("  Needs \t  review ", "red")
        assert (created.name, created.color) == ("Needs review", "red")
        assert created.name == normalize_label_name("  Needs \t  review ")
        await store.labels.create("backend", "sky")
        await store.labels.create("Alpha", "amber")
        expected = [("Needs review", "red"), ("backend", "sky"), ("Alpha", "amber")]
        assert [(d.name, d.color) for d in await store.labels.list()] == expected
        store = await self.reopen(store)
        assert [(d.name, d.color) for d in await store.labels.list()] == expected

    @store_test
    async def test_label_create_rejects_duplicate_identity(self, store: Store) -> None:
        await store.labels.create("Needs review", "red")
        for name in ("Needs review", "needs REVIEW", "  needs   review  ", "NEEDS\u00a0REVIEW"):
            await _raises(Conflict, store.labels.create(name, "sky"))
        assert [d.name for d in await store.labels.list()] == ["Needs review"]

    @store_test
    async def test_label_create_rejects_invalid(self, store: Store) -> None:
        await _raises(InvalidParams, store.labels.create("   ", "red"))
        await _raises(InvalidParams, store.labels.create("", "red"))
        await _raises(InvalidParams, store.labels.create("ok", "magenta"))
        assert await store.labels.list() == []

    @store_test
    async def test_label_recolour_is_catalog_only(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Web", "pink")
        (ws,) = await self._labelled_workspaces(store, [["Backend"]])
        stamp = await self._updated_at(store, ws)
        edited = await store.labels.edit("backend", color="teal", now=iso(500))
        assert (edited.name, edited.color) == ("Backend", "teal")
        assert [(d.name, d.color) for d in await store.labels.list()] == [
            ("Backend", "teal"),
            ("Web", "pink"),
        ]
        assert await self._labels_of(store, ws) == ["Backend"]
        assert await self._updated_at(store, ws) == stamp
        await _raises(InvalidParams, store.labels.edit("Backend", color="magenta", now=iso(501)))
        assert [d.color for d in await store.labels.list()] == ["teal", "pink"]

    @store_test
    async def test_label_rename_rewrites_assignments(self, store: Store) -> None:
        for name, color in (("Backend", "sky"), ("Web", "pink"), ("Ops", "amber")):
            await store.labels.create(name, color)
        ws = await self._labelled_workspaces(
            store, [["Backend", "Web"], ["Web"], ["Ops", "Backend"], []]
        )
        untouched = {w: await self._updated_at(store, w) for w in (ws[1], ws[3])}
        edited = await store.labels.edit("BACKEND", new_name="  Server   side ", now=iso(900))
        assert (edited.name, edited.color) == ("Server side", "sky")
        assert [d.name for d in await store.labels.list()] == ["Server side", "Web", "Ops"]
        for _ in range(2):
            assert await self._labels_of(store, ws[0]) == ["Server side", "Web"]
            assert await self._labels_of(store, ws[1]) == ["Web"]
            assert await self._labels_of(store, ws[2]) == ["Ops", "Server side"]
            assert await self._labels_of(store, ws[3]) == []
            assert await self._updated_at(store, ws[0]) == iso(900)
            assert await self._updated_at(store, ws[2]) == iso(900)
            for w, stamp in untouched.items():
                assert await self._updated_at(store, w) == stamp
            store = await self.reopen(store)

    @store_test
    async def test_label_rename_and_recolour_in_one_edit(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        (ws,) = await self._labelled_workspaces(store, [["Backend"]])
        edited = await store.labels.edit("Backend", new_name="API", color="indigo", now=iso(7))
        assert (edited.name, edited.color) == ("API", "indigo")
        store = await self.reopen(store)
        assert [(d.name, d.color) for d in await store.labels.list()] == [("API", "indigo")]
        assert await self._labels_of(store, ws) == ["API"]

    @store_test
    async def test_label_rename_case_only_is_allowed(self, store: Store) -> None:
        await store.labels.create("backend", "sky")
        (ws,) = await self._labelled_workspaces(store, [["backend"]])
        edited = await store.labels.edit("backend", new_name="Backend", now=iso(3))
        assert edited.name == "Backend"
        assert [d.name for d in await store.labels.list()] == ["Backend"]
        assert await self._labels_of(store, ws) == ["Backend"]

    @store_test
    async def test_label_rename_onto_existing_conflicts(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Web", "pink")
        ws = await self._labelled_workspaces(store, [["Backend"], ["Web", "Backend"]])
        before_catalog = await store.labels.list()
        before = [dump_record(w) for w in (await store.workspaces.list()).items]
        for target in ("Web", "web", " WEB "):
            await _raises(
                Conflict, store.labels.edit("Backend", new_name=target, color="red", now=iso(9))
            )
        assert await store.labels.list() == before_catalog
        assert [dump_record(w) for w in (await store.workspaces.list()).items] == before
        store = await self.reopen(store)
        assert await store.labels.list() == before_catalog
        assert await self._labels_of(store, ws[1]) == ["Web", "Backend"]

    @store_test
    async def test_label_edit_unknown_is_not_found(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await _raises(NotFound, store.labels.edit("Frontend", new_name="UI", now=iso(1)))
        await _raises(NotFound, store.labels.edit("Frontend", color="red", now=iso(1)))
        assert [(d.name, d.color) for d in await store.labels.list()] == [("Backend", "sky")]

    @store_test
    async def test_label_delete_rewrites_assignments(self, store: Store) -> None:
        for name, color in (("Backend", "sky"), ("Web", "pink")):
            await store.labels.create(name, color)
        ws = await self._labelled_workspaces(store, [["Backend", "Web"], ["Web"], ["Backend"]])
        stamp = await self._updated_at(store, ws[1])
        assert await store.labels.delete(" backend ", now=iso(700)) is True
        assert await store.labels.delete("Backend", now=iso(701)) is False
        for _ in range(2):
            assert [d.name for d in await store.labels.list()] == ["Web"]
            assert await self._labels_of(store, ws[0]) == ["Web"]
            assert await self._labels_of(store, ws[1]) == ["Web"]
            assert await self._labels_of(store, ws[2]) == []
            assert await self._updated_at(store, ws[0]) == iso(700)
            assert await self._updated_at(store, ws[2]) == iso(700)
            assert await self._updated_at(store, ws[1]) == stamp
            store = await self.reopen(store)
        # The name is free again.
        await store.labels.create("BACKEND", "red")

    @store_test
    async def test_label_assign_and_unassign_are_idempotent(self, store: Store) -> None:
        for name, color in (("Backend", "sky"), ("Web", "pink"), ("Ops", "amber")):
            await store.labels.create(name, color)
        (ws,) = await self._labelled_workspaces(store, [[]])
        stored = await store.labels.assign(ws, ["backend", "Web"], now=iso(10))
        # Assignments hold the catalog's display names, whatever spelling the caller used.
        assert stored.labels == ["Backend", "Web"]
        assert stored.updatedAt == iso(10)
        stored = await store.labels.assign(ws, ["BACKEND", "Ops"], now=iso(11))
        assert stored.labels == ["Backend", "Web", "Ops"]
        stored = await store.labels.assign(ws, ["Web"], now=iso(12))
        assert stored.labels == ["Backend", "Web", "Ops"]
        stored = await store.labels.unassign(ws, ["web"], now=iso(13))
        assert stored.labels == ["Backend", "Ops"]
        assert stored.updatedAt == iso(13)
        stored = await store.labels.unassign(ws, ["Web"], now=iso(14))
        assert list(stored.labels or []) == ["Backend", "Ops"]
        store = await self.reopen(store)
        assert await self._labels_of(store, ws) == ["Backend", "Ops"]
        stored = await store.labels.unassign(ws, ["Backend", "Ops"], now=iso(15))
        assert list(stored.labels or []) == []

    @store_test
    async def test_label_assign_unknown_is_not_found(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        (ws,) = await self._labelled_workspaces(store, [[]])
        before = await store.workspaces.get(ws)
        await _raises(NotFound, store.labels.assign(new_workspace_id(), ["Backend"], now=iso(1)))
        await _raises(NotFound, store.labels.unassign(new_workspace_id(), ["Backend"], now=iso(1)))
        # One unknown name refuses the whole assignment.
        await _raises(NotFound, store.labels.assign(ws, ["Backend", "Nope"], now=iso(1)))
        assert await store.workspaces.get(ws) == before
        store = await self.reopen(store)
        got = await store.workspaces.get(ws)
        assert got is not None
        assert before is not None
        assert dump_record(got) == dump_record(before)
