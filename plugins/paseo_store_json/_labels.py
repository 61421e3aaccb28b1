"""The workspace label catalog and its compound commits.

Recolour and create touch only ``projects/workspace-labels.json``. Rename and delete also
rewrite the assignments in ``projects/workspaces.json``; they follow the data model's protocol:

1. write ``workspace-labels.transaction.json`` with ``phase: prepared`` and the before and
   after images (catalog, and each affected workspace's label slice);
2. write the catalog, then the workspace registry;
3. rewrite the marker with ``phase: committed`` — the durable commit point;
4. publish to memory, then delete the marker (a leftover committed marker is only cleaned up
   by the next open, never replayed).

A failure before the commit point is rolled back (marker back to prepared when the commit write
may have landed, both before-images rewritten, marker removed) and reported as
``StorageError``. If the rollback fails too, or a prepared marker cannot be removed, the state
on disk is uncertain: the store freezes every workspace-registry write and label mutation with
``WorkspaceLabelStorageUncertain`` until it is reopened, whose recovery settles the marker.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Sequence
from pathlib import Path

from paseo_hookspecs.errors import (
    Conflict,
    InvalidParams,
    NotFound,
    StorageError,
    WorkspaceLabelStorageUncertain,
)
from paseo_hookspecs.records import (
    WORKSPACE_LABEL_COLORS,
    WORKSPACE_LABELS_FILE,
    WORKSPACE_LABELS_TRANSACTION_FILE,
    WorkspaceLabelDefinition,
    WorkspaceLabelTransaction,
    WorkspaceRecord,
    dump_record,
    label_identity,
    normalize_label_name,
)
from paseo_hookspecs.store import LabelRepository

from paseo_store_json._collections import JsonWorkspaceRepository
from paseo_store_json._core import Core, clone, validated, with_changes
from paseo_store_json._files import encode_json

log = logging.getLogger("paseo.store.json")


class _Uncertain(Exception):
    """Raised in the worker thread when the durable state can no longer be determined."""


def _label_slice(workspace: WorkspaceRecord) -> dict[str, object]:
    state: dict[str, object] = {
        "workspaceId": workspace.workspaceId,
        "updatedAt": workspace.updatedAt,
    }
    if workspace.labels is not None:
        state["labels"] = list(workspace.labels)
    return state


class JsonLabelRepository(LabelRepository):
    """The host-wide label catalog, locked before the workspace registry when both are held."""

    def __init__(self, core: Core, workspaces: JsonWorkspaceRepository) -> None:
        self.core = core
        self.workspaces = workspaces
        self.catalog: builtins.list[WorkspaceLabelDefinition] = []
        self.lock = asyncio.Lock()

    @property
    def _catalog_path(self) -> Path:
        return self.core.home / WORKSPACE_LABELS_FILE

    @property
    def _marker_path(self) -> Path:
        return self.core.home / WORKSPACE_LABELS_TRANSACTION_FILE

    def _find(self, name: str) -> int | None:
        identity = label_identity(name)
        for index, label in enumerate(self.catalog):
            if label_identity(label.name) == identity:
                return index
        return None

    @staticmethod
    def _clean_name(name: object) -> str:
        if not isinstance(name, str) or not normalize_label_name(name):
            raise InvalidParams("a label name is a non-empty string")
        return normalize_label_name(name)

    @staticmethod
    def _check_color(color: object) -> str:
        if color not in WORKSPACE_LABEL_COLORS:
            raise InvalidParams(
                f"unknown label colour {color!r}; one of {', '.join(WORKSPACE_LABEL_COLORS)}"
            )
        return str(color)

    async def list(self) -> builtins.list[WorkspaceLabelDefinition]:
        self.core.check_open()
        return [clone(label) for label in self.catalog]

    async def _write_catalog(self, catalog: builtins.list[WorkspaceLabelDefinition]) -> None:
        data = encode_json([dump_record(label) for label in catalog])
        path = self._catalog_path
        await self.core.io(lambda: self.core.ops.write_bytes(path, data), f"writing {path}")
        self.catalog = catalog

    async def create(self, name: str, color: str) -> WorkspaceLabelDefinition:
        clean = self._clean_name(name)
        label = validated(
            WorkspaceLabelDefinition, {"name": clean, "color": self._check_color(color)}
        )[0]

        async def operation() -> WorkspaceLabelDefinition:
            async with self.lock:
                self.core.check_certain()
                if self._find(clean) is not None:
                    raise Conflict(f"a label named {clean!r} already exists")
                await self._write_catalog([*self.catalog, label])
                return clone(label)

        return await self.core.write(operation)

    async def edit(
        self, name: str, *, new_name: str | None = None, color: str | None = None, now: str
    ) -> WorkspaceLabelDefinition:
        clean_new = None if new_name is None else self._clean_name(new_name)
        new_color = None if color is None else self._check_color(color)

        async def operation() -> WorkspaceLabelDefinition:
            async with self.lock, self.workspaces.lock:
                self.core.check_certain()
                index = self._find(name)
                if index is None:
                    raise NotFound(f"no label named {name!r}")
                current = self.catalog[index]
                if (
                    clean_new is not None
                    and label_identity(clean_new) != label_identity(current.name)
                    and self._find(clean_new) is not None
                ):
                    raise Conflict(f"a label named {clean_new!r} already exists")
                data = dump_record(current)
                if clean_new is not None:
                    data["name"] = clean_new
                if new_color is not None:
                    data["color"] = new_color
                updated = validated(WorkspaceLabelDefinition, data)[0]
                catalog = [*self.catalog]
                catalog[index] = updated
                if updated.name == current.name:
                    if updated.color != current.color:
                        await self._write_catalog(catalog)
                    return clone(updated)
                identity = label_identity(current.name)
                changed: dict[str, WorkspaceRecord] = {}
                for workspace_id, workspace in self.workspaces.table.rows.items():
                    labels = workspace.labels or []
                    if not any(label_identity(item) == identity for item in labels):
                        continue
                    renamed: list[str] = []
                    for item in labels:
                        target = updated.name if label_identity(item) == identity else item
                        if all(label_identity(target) != label_identity(x) for x in renamed):
                            renamed.append(target)
                    changed[workspace_id] = with_changes(
                        WorkspaceRecord,
                        workspace,
                        {"labels": renamed, "updatedAt": now},
                        "workspaceId",
                    )[0]
                await self._compound(catalog, changed)
                return clone(updated)

        return await self.core.write(operation)

    async def delete(self, name: str, *, now: str) -> bool:
        async def operation() -> bool:
            async with self.lock, self.workspaces.lock:
                self.core.check_certain()
                index = self._find(name)
                if index is None:
                    return False
                identity = label_identity(self.catalog[index].name)
                changed: dict[str, WorkspaceRecord] = {}
                for workspace_id, workspace in self.workspaces.table.rows.items():
                    labels = workspace.labels or []
                    kept = [item for item in labels if label_identity(item) != identity]
                    if len(kept) != len(labels):
                        changed[workspace_id] = with_changes(
                            WorkspaceRecord,
                            workspace,
                            {"labels": kept, "updatedAt": now},
                            "workspaceId",
                        )[0]
                catalog = [label for i, label in enumerate(self.catalog) if i != index]
                await self._compound(catalog, changed)
                return True

        return await self.core.write(operation)

    async def assign(self, workspace_id: str, names: Sequence[str], *, now: str) -> WorkspaceRecord:
        async def operation() -> WorkspaceRecord:
            async with self.lock, self.workspaces.lock:
                self.core.check_certain()
                workspace = self._workspace(workspace_id)
                labels = list(workspace.labels or [])
                for name in names:
                    index = self._find(name) if isinstance(name, str) else None
                    if index is None:
                        raise NotFound(f"no label named {name!r}")
                    canonical = self.catalog[index].name
                    if all(label_identity(item) != label_identity(canonical) for item in labels):
                        labels.append(canonical)
                return await self._set_labels(workspace, labels, now)

        return await self.core.write(operation)

    async def unassign(
        self, workspace_id: str, names: Sequence[str], *, now: str
    ) -> WorkspaceRecord:
        async def operation() -> WorkspaceRecord:
            async with self.workspaces.lock:
                self.core.check_certain()
                workspace = self._workspace(workspace_id)
                gone = {label_identity(name) for name in names if isinstance(name, str)}
                labels = [
                    item for item in workspace.labels or [] if label_identity(item) not in gone
                ]
                return await self._set_labels(workspace, labels, now)

        return await self.core.write(operation)

    def _workspace(self, workspace_id: str) -> WorkspaceRecord:
        workspace = self.workspaces.table.rows.get(workspace_id)
        if workspace is None:
            raise NotFound(f"workspace {workspace_id} not found")
        return workspace

    async def _set_labels(
        self, workspace: WorkspaceRecord, labels: builtins.list[str], now: str
    ) -> WorkspaceRecord:
        if labels == list(workspace.labels or []):
            return clone(workspace)
        row = with_changes(
            WorkspaceRecord, workspace, {"labels": labels, "updatedAt": now}, "workspaceId"
        )[0]
        await self.workspaces.write_file(self.workspaces.encoded_with({row.workspaceId: row}))
        self.workspaces.table.replace(row)
        return clone(row)

    # --- the compound commit ------------------------------------------------------------------

    async def _compound(
        self, catalog: builtins.list[WorkspaceLabelDefinition], changed: dict[str, WorkspaceRecord]
    ) -> None:
        """Commit a catalog and assignment change together (caller holds both locks)."""
        rows = self.workspaces.table.rows
        images = {
            "beforeLabels": [dump_record(label) for label in self.catalog],
            "afterLabels": [dump_record(label) for label in catalog],
            "beforeWorkspaces": [_label_slice(rows[key]) for key in changed],
            "afterWorkspaces": [_label_slice(row) for row in changed.values()],
        }
        prepared = validated(WorkspaceLabelTransaction, {"phase": "prepared", **images})[1]
        committed = validated(WorkspaceLabelTransaction, {"phase": "committed", **images})[1]
        catalog_after = encode_json(images["afterLabels"])
        catalog_before = encode_json(images["beforeLabels"])
        workspaces_after = self.workspaces.encoded_with(changed)
        workspaces_before = self.workspaces.encoded_with({})
        ops = self.core.ops
        marker, catalog_path, workspaces_path = (
            self._marker_path,
            self._catalog_path,
            self.workspaces.path,
        )

        def commit() -> None:
            try:
                ops.write_bytes(marker, prepared)
            except OSError as exc:
                # The marker may have landed even so (renamed, then the directory fsync
                # failed). A prepared marker left behind would roll later registry writes back
                # at the next start, so it must go.
                try:
                    ops.remove(marker)
                except OSError as again:
                    raise _Uncertain(
                        f"cannot remove the prepared marker {marker}: {again}"
                    ) from exc
                raise
            commit_attempted = False
            try:
                ops.write_bytes(catalog_path, catalog_after)
                ops.write_bytes(workspaces_path, workspaces_after)
                commit_attempted = True
                ops.write_bytes(marker, committed)
            except OSError as exc:
                try:
                    if commit_attempted:
                        # Back to prepared first: an interrupted rollback then still rolls back.
                        ops.write_bytes(marker, prepared)
                    ops.write_bytes(catalog_path, catalog_before)
                    ops.write_bytes(workspaces_path, workspaces_before)
                    ops.remove(marker)
                except OSError as again:
                    raise _Uncertain(f"rollback failed: {again} (after: {exc})") from exc
                raise

        try:
            await asyncio.to_thread(commit)
        except _Uncertain as exc:
            self.core.uncertain = str(exc)
            log.critical("workspace label storage is uncertain; writes frozen: %s", exc)
            raise WorkspaceLabelStorageUncertain(
                f"the label change could not be completed or rolled back: {exc}"
            ) from exc
        except OSError as exc:
            raise StorageError(f"label change not applied (rolled back): {exc}") from exc
        # Past the commit point: publish, then clean the marker up.
        self.catalog = catalog
        for row in changed.values():
            self.workspaces.table.replace(row)
        try:
            await asyncio.to_thread(ops.remove, marker)
        except OSError:
            log.warning(
                "could not remove the committed label transaction %s; the next open cleans it up",
                marker,
                exc_info=True,
            )
