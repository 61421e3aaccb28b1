"""The label catalog's compound commit: protocol, recovery of each crash point, and freeze."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import Conflict, StorageError, WorkspaceLabelStorageUncertain
from paseo_hookspecs.records import dump_record
from paseo_store_json import JsonStore

W1, W2 = "wks_0000000000000001", "wks_0000000000000002"
T0, T1 = "2026-05-01T10:00:00.000Z", "2026-05-06T15:02:33.118Z"
BEFORE_LABELS = [{"name": "Backend", "color": "sky"}, {"name": "Urgent", "color": "red"}]
AFTER_LABELS = [{"name": "Backend", "color": "sky"}, {"name": "Hotfix", "color": "red"}]


def _json(path: Path) -> Any:
    return json.loads(path.read_bytes())


def _paths(home: Path) -> tuple[Path, Path, Path]:
    projects = home / "projects"
    return (
        projects / "workspace-labels.json",
        projects / "workspaces.json",
        projects / "workspace-labels.transaction.json",
    )


def _seed(home: Path, make_workspace, *, labels1: list[str], updated1: str, catalog) -> None:
    catalog_path, workspaces_path, _ = _paths(home)
    catalog_path.parent.mkdir(parents=True, exist_ok=True)
    catalog_path.write_text(json.dumps(catalog))
    workspaces = [
        dump_record(make_workspace(W1, labels=labels1, updatedAt=updated1)),
        dump_record(make_workspace(W2, labels=["Backend"])),
    ]
    workspaces_path.write_text(json.dumps(workspaces))


def _marker(phase: str) -> dict[str, Any]:
    return {
        "phase": phase,
        "beforeLabels": BEFORE_LABELS,
        "afterLabels": AFTER_LABELS,
        "beforeWorkspaces": [{"workspaceId": W1, "labels": ["Backend", "Urgent"], "updatedAt": T0}],
        "afterWorkspaces": [{"workspaceId": W1, "labels": ["Backend", "Hotfix"], "updatedAt": T1}],
    }


async def _opened(home: Path, ops: Any = None) -> JsonStore:
    store = JsonStore(home, file_ops=ops)
    await store.open()
    return store


async def _state(store: JsonStore) -> tuple[list[Any], list[str] | None, str]:
    catalog = [dump_record(label) for label in await store.labels.list()]
    workspace = await store.workspaces.get(W1)
    assert workspace is not None
    return catalog, workspace.labels, workspace.updatedAt


# --- recovery of each crash point ------------------------------------------------------------


def test_crash_before_the_commit_point_rolls_back(home, make_workspace):
    # Both data files already hold the after-images, but the marker never became committed.
    _seed(home, make_workspace, labels1=["Backend", "Hotfix"], updated1=T1, catalog=AFTER_LABELS)
    _paths(home)[2].write_text(json.dumps(_marker("prepared")))

    async def scenario() -> None:
        store = await _opened(home)
        assert await _state(store) == (BEFORE_LABELS, ["Backend", "Urgent"], T0)
        await store.close()

    asyncio.run(scenario())
    catalog_path, workspaces_path, marker = _paths(home)
    assert not marker.exists()
    assert _json(catalog_path) == BEFORE_LABELS
    assert _json(workspaces_path)[0]["labels"] == ["Backend", "Urgent"]
    # The untouched workspace is untouched.
    assert _json(workspaces_path)[1]["labels"] == ["Backend"]


def test_crash_half_way_through_a_rollback_finishes_it(home, make_workspace):
    # Recovery had restored the catalog, then crashed before the workspace registry.
    _seed(home, make_workspace, labels1=["Backend", "Hotfix"], updated1=T1, catalog=BEFORE_LABELS)
    _paths(home)[2].write_text(json.dumps(_marker("prepared")))

    async def scenario() -> None:
        store = await _opened(home)
        assert await _state(store) == (BEFORE_LABELS, ["Backend", "Urgent"], T0)
        await store.close()

    asyncio.run(scenario())
    assert not _paths(home)[2].exists()


def test_crash_after_the_commit_point_keeps_current_files_and_never_replays(home, make_workspace):
    # Committed, then a later assignment changed W1 again before the marker was cleaned up.
    _seed(
        home,
        make_workspace,
        labels1=["Hotfix"],
        updated1="2026-05-07T00:00:00Z",
        catalog=AFTER_LABELS,
    )
    _paths(home)[2].write_text(json.dumps(_marker("committed")))

    async def scenario() -> None:
        store = await _opened(home)
        assert await _state(store) == (AFTER_LABELS, ["Hotfix"], "2026-05-07T00:00:00Z")
        await store.close()

    asyncio.run(scenario())
    assert not _paths(home)[2].exists()


def test_a_committed_marker_that_cannot_be_removed_still_opens(home, make_workspace, ops):
    _seed(home, make_workspace, labels1=["Backend", "Hotfix"], updated1=T1, catalog=AFTER_LABELS)
    _paths(home)[2].write_text(json.dumps(_marker("committed")))
    ops.fail("remove", "workspace-labels.transaction.json")

    async def scenario() -> None:
        store = await _opened(home, ops)
        assert await _state(store) == (AFTER_LABELS, ["Backend", "Hotfix"], T1)
        # Later writes are safe: the leftover marker is committed, so never replayed.
        await store.workspaces.update(W1, {"title": "still writable"})
        await store.close()

    asyncio.run(scenario())
    assert _json(_paths(home)[2])["phase"] == "committed"


# --- the live protocol ---------------------------------------------------------------------


def test_rename_rewrites_assignments_in_one_commit(home, make_workspace, ops):
    _seed(home, make_workspace, labels1=["Backend", "Urgent"], updated1=T0, catalog=BEFORE_LABELS)

    async def scenario() -> None:
        store = await _opened(home, ops)
        ops.calls.clear()
        label = await store.labels.edit("  urgent ", new_name="Hotfix", now=T1)
        assert dump_record(label) == {"name": "Hotfix", "color": "red"}
        assert await _state(store) == (AFTER_LABELS, ["Backend", "Hotfix"], T1)
        w2 = await store.workspaces.get(W2)
        assert w2 is not None
        assert w2.updatedAt == T0
        await store.close()

    asyncio.run(scenario())
    assert ops.calls == [
        ("write", "workspace-labels.transaction.json"),
        ("write", "workspace-labels.json"),
        ("write", "workspaces.json"),
        ("write", "workspace-labels.transaction.json"),
        ("remove", "workspace-labels.transaction.json"),
    ]
    catalog_path, workspaces_path, marker = _paths(home)
    assert _json(catalog_path) == AFTER_LABELS
    assert _json(workspaces_path)[0]["labels"] == ["Backend", "Hotfix"]
    assert not marker.exists()


def test_recolour_is_catalog_only_and_rename_onto_an_existing_name_is_refused(
    home, make_workspace, ops
):
    _seed(home, make_workspace, labels1=["Backend", "Urgent"], updated1=T0, catalog=BEFORE_LABELS)
    workspaces_path = _paths(home)[1]
    before = workspaces_path.read_bytes()

    async def scenario() -> None:
        store = await _opened(home, ops)
        ops.calls.clear()
        recoloured = await store.labels.edit("Urgent", color="amber", now=T1)
        assert recoloured.color == "amber"
        assert ops.calls == [("write", "workspace-labels.json")]
        with pytest.raises(Conflict):
            await store.labels.edit("Urgent", new_name=" BACKEND ", now=T1)
        with pytest.raises(Conflict):
            await store.labels.create("backend", "sky")
        # A case-only rename of the same identity is allowed and rewrites assignments.
        await store.labels.edit("urgent", new_name="URGENT", now=T1)
        assert (await _state(store))[1] == ["Backend", "URGENT"]
        await store.close()

    asyncio.run(scenario())
    assert before != workspaces_path.read_bytes()  # only the case-only rename touched it


def test_delete_removes_every_assignment(home, make_workspace):
    _seed(home, make_workspace, labels1=["Backend", "Urgent"], updated1=T0, catalog=BEFORE_LABELS)

    async def scenario() -> None:
        store = await _opened(home)
        assert await store.labels.delete("BACKEND", now=T1)
        assert not await store.labels.delete("Backend", now=T1)
        w1, w2 = await store.workspaces.get(W1), await store.workspaces.get(W2)
        assert w1 is not None
        assert w1.labels == ["Urgent"]
        assert w1.updatedAt == T1
        assert w2 is not None
        assert w2.labels == []
        assert w2.updatedAt == T1
        assert [d.name for d in await store.labels.list()] == ["Urgent"]
        await store.close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("kind", "name", "after"),
    [
        ("write", "workspace-labels.json", 0),  # writing the catalog
        ("write", "workspaces.json", 0),  # writing the registry
        ("write", "workspace-labels.transaction.json", 1),  # flipping to committed
    ],
)
def test_a_failure_before_the_commit_point_rolls_back_and_raises(
    home, make_workspace, kind, name, after, ops
):
    _seed(home, make_workspace, labels1=["Backend", "Urgent"], updated1=T0, catalog=BEFORE_LABELS)
    catalog_path, workspaces_path, marker = _paths(home)

    async def scenario() -> None:
        store = await _opened(home, ops)
        catalog_before, workspaces_before = catalog_path.read_bytes(), workspaces_path.read_bytes()
        ops.fail(kind, name, after=after)
        with pytest.raises(StorageError, match="rolled back"):
            await store.labels.edit("Urgent", new_name="Hotfix", now=T1)
        assert await _state(store) == (BEFORE_LABELS, ["Backend", "Urgent"], T0)
        assert json.loads(catalog_path.read_bytes()) == json.loads(catalog_before)
        assert json.loads(workspaces_path.read_bytes()) == json.loads(workspaces_before)
        assert not marker.exists()
        assert store.label_storage_uncertain is None
        # Not frozen: the next attempt goes through.
        await store.labels.edit("Urgent", new_name="Hotfix", now=T1)
        await store.close()

    asyncio.run(scenario())


def test_a_marker_cleanup_failure_after_commit_still_succeeds(home, make_workspace, ops):
    _seed(home, make_workspace, labels1=["Backend", "Urgent"], updated1=T0, catalog=BEFORE_LABELS)

    async def scenario() -> None:
        store = await _opened(home, ops)
        ops.fail("remove", "workspace-labels.transaction.json")
        await store.labels.edit("Urgent", new_name="Hotfix", now=T1)
        assert await _state(store) == (AFTER_LABELS, ["Backend", "Hotfix"], T1)
        await store.close()
        assert _json(_paths(home)[2])["phase"] == "committed"
        reopened = await _opened(home)
        assert await _state(reopened) == (AFTER_LABELS, ["Backend", "Hotfix"], T1)
        await reopened.close()

    asyncio.run(scenario())
    assert not _paths(home)[2].exists()


def test_an_unrecoverable_failure_freezes_until_reopen(home, make_workspace):
    """workspaces.json is replaced by a directory: writing it fails, and so does the rollback
    of it, so the durable state is uncertain."""
    _seed(home, make_workspace, labels1=["Backend", "Urgent"], updated1=T0, catalog=BEFORE_LABELS)
    _catalog_path, workspaces_path, marker = _paths(home)
    saved = workspaces_path.with_name("saved-workspaces.json")

    async def frozen_phase() -> None:
        store = await _opened(home)
        os.replace(workspaces_path, saved)
        workspaces_path.mkdir()
        with pytest.raises(WorkspaceLabelStorageUncertain):
            await store.labels.edit("Urgent", new_name="Hotfix", now=T1)
        assert store.label_storage_uncertain
        # Reads still serve the last acknowledged state.
        assert await _state(store) == (BEFORE_LABELS, ["Backend", "Urgent"], T0)
        # Every workspace-registry write and label mutation is refused.
        attempts = [
            store.workspaces.update(W1, {"title": "x"}),
            store.workspaces.insert(make_workspace("wks_0000000000000003")),
            store.workspaces.delete(W2),
            store.labels.create("New", "teal"),
            store.labels.edit("Backend", color="amber", now=T1),
            store.labels.delete("Backend", now=T1),
            store.labels.assign(W2, ["Urgent"], now=T1),
            store.labels.unassign(W1, ["Urgent"], now=T1),
        ]
        for attempt in attempts:
            with pytest.raises(WorkspaceLabelStorageUncertain):
                await attempt
        await store.close()

    asyncio.run(frozen_phase())
    assert _json(marker)["phase"] == "prepared"

    # The operator fixes the disk; reopening rolls the prepared transaction back.
    workspaces_path.rmdir()
    os.replace(saved, workspaces_path)

    async def recovered_phase() -> None:
        store = await _opened(home)
        assert store.label_storage_uncertain is None
        assert await _state(store) == (BEFORE_LABELS, ["Backend", "Urgent"], T0)
        await store.labels.edit("Urgent", new_name="Hotfix", now=T1)
        assert await _state(store) == (AFTER_LABELS, ["Backend", "Hotfix"], T1)
        await store.close()

    asyncio.run(recovered_phase())
    assert not marker.exists()


def test_a_prepared_marker_that_cannot_be_removed_freezes(home, make_workspace, ops):
    _seed(home, make_workspace, labels1=["Backend", "Urgent"], updated1=T0, catalog=BEFORE_LABELS)

    async def scenario() -> None:
        store = await _opened(home, ops)
        ops.fail("write", "workspace-labels.transaction.json")
        ops.fail("remove", "workspace-labels.transaction.json")
        with pytest.raises(WorkspaceLabelStorageUncertain):
            await store.labels.delete("Urgent", now=T1)
        with pytest.raises(WorkspaceLabelStorageUncertain):
            await store.labels.assign(W2, ["Urgent"], now=T1)
        await store.close()

    asyncio.run(scenario())


def test_assign_and_unassign_are_idempotent(home, make_workspace):
    _seed(home, make_workspace, labels1=["Backend"], updated1=T0, catalog=BEFORE_LABELS)

    async def scenario() -> None:
        store = await _opened(home)
        first = await store.labels.assign(W1, ["urgent", "URGENT"], now=T1)
        assert first.labels == ["Backend", "Urgent"]
        assert first.updatedAt == T1
        again = await store.labels.assign(W1, ["Urgent"], now="2030-01-01T00:00:00Z")
        assert again.updatedAt == T1  # nothing changed, nothing written
        gone = await store.labels.unassign(W1, ["backend", "never-existed"], now=T1)
        assert gone.labels == ["Urgent"]
        await store.close()

    asyncio.run(scenario())
