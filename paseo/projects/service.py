"""The project registry service.

A project is allocated for the exact root its caller selected, normalized lexically (never
realpathed). Opening an active exact root again returns the same project (the store's
``insert_if_root_free`` makes that atomic); a root whose only records are archived gets a fresh
opaque ``prj_<16 hex>`` project rather than a resurrected one. Legacy remote- or path-shaped ids
stay readable and are never rekeyed or merged.

``kind`` and ``projectKey`` are mutable observations refreshed by reconciliation
(:meth:`ProjectRegistry.refresh`); ``projectKey`` is written at creation and backfilled at boot
for records that lack it (:meth:`ProjectRegistry.backfill_project_keys`).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import ProjectRecord, dump_record
from paseo_hookspecs.records.ids import new_project_id

from paseo.git.facts import RepoFacts, normalize_path, project_key_for, read_facts
from paseo.projects.common import PAGE, Publish, collect, no_publish, utc_now
from paseo.projects.icons import Icon, IconStore, discover_icon, validate_upload
from paseo.projects.paths import is_within


def project_kind(facts: RepoFacts | None) -> str:
    """``git`` when the root lies in a Git checkout, else ``non_git``."""
    return "git" if facts is not None else "non_git"


class ProjectRegistry:
    """Project records: allocation, names, icons and Git-derived metadata."""

    def __init__(self, store: Store, icons: IconStore, publish: Publish = no_publish) -> None:
        self.store = store
        self.icons = icons
        self.publish = publish

    def _announce(self, project: ProjectRecord) -> None:
        self.publish("project.changed", {"project": dump_record(project)})

    # ------------------------------------------------------------------ reads

    async def list(self, *, include_archived: bool = False) -> list[ProjectRecord]:
        """Every project, in registry order."""
        return await collect(
            lambda cursor: self.store.projects.list(
                include_archived=include_archived, cursor=cursor, limit=PAGE
            )
        )

    async def get(self, project_id: str) -> ProjectRecord:
        """The project, or :class:`NotFound`."""
        project = await self.store.projects.get(project_id)
        if project is None:
            raise NotFound(f"project {project_id} not found", data={"projectId": project_id})
        return project

    async def get_active(self, project_id: str) -> ProjectRecord:
        """The project if it is active; :class:`NotFound` or :class:`Conflict` (archived)."""
        project = await self.get(project_id)
        if project.archivedAt is not None:
            raise Conflict(f"project {project_id} is archived", data={"projectId": project_id})
        return project

    async def containing(self, path: str) -> ProjectRecord | None:
        """The active project with the longest root at or above ``path``, if any."""
        best: ProjectRecord | None = None
        for project in await self.list():
            root = normalize_path(project.rootPath)
            if is_within(path, root) and (best is None or len(root) > len(best.rootPath)):
                best = project
        return best

    # ------------------------------------------------------------ allocation

    async def add(self, root: str, *, name: str | None = None) -> tuple[ProjectRecord, bool]:
        """The active project of exactly ``root`` (already validated; normalized here,
        lexically), creating it when there is none; returns ``(project, created)``."""
        root = normalize_path(root)
        facts = await asyncio.to_thread(read_facts, root)
        now = utc_now()
        record = ProjectRecord(
            projectId=new_project_id(),
            rootPath=root,
            kind=project_kind(facts),  # type: ignore[arg-type]
            displayName=os.path.basename(root) or root,
            projectKey=project_key_for(root, facts),
            customName=name,
            customIconRevision=None,
            createdAt=now,
            updatedAt=now,
            archivedAt=None,
        )
        stored, created = await self.store.projects.insert_if_root_free(record)
        if created:
            self._announce(stored)
        return stored, created

    # -------------------------------------------------------------- mutations

    async def _update(self, project_id: str, changes: dict[str, Any]) -> ProjectRecord:
        project = await self.store.projects.update(project_id, {**changes, "updatedAt": utc_now()})
        self._announce(project)
        return project

    async def rename(self, project_id: str, name: str | None) -> ProjectRecord:
        """Set (or with ``None`` clear) the custom name; ``displayName`` never changes."""
        await self.get(project_id)
        cleaned = name.strip() if name is not None else None
        return await self._update(project_id, {"customName": cleaned or None})

    async def archive(self, project_id: str) -> ProjectRecord:
        """Soft-delete the project (idempotent)."""
        project = await self.get(project_id)
        if project.archivedAt is not None:
            return project
        return await self._update(project_id, {"archivedAt": utc_now()})

    async def restore(self, project_id: str) -> ProjectRecord:
        """Undo :meth:`archive` (idempotent); refused while another active project holds the
        same root (it took the root over meanwhile)."""
        project = await self.get(project_id)
        if project.archivedAt is None:
            return project
        root = normalize_path(project.rootPath)
        for other in await self.list():
            if normalize_path(other.rootPath) == root:
                raise Conflict(
                    f"project {other.projectId} now holds {root}; project {project_id} stays "
                    "archived",
                    data={"projectId": project_id, "heldBy": other.projectId},
                )
        return await self._update(project_id, {"archivedAt": None})

    # ------------------------------------------------------------------ icons

    async def set_icon(self, project_id: str, data: bytes) -> ProjectRecord:
        """Validate and store an uploaded icon, record its new revision, drop the old file."""
        mime = validate_upload(data)
        await self.get(project_id)
        revision = await asyncio.to_thread(self.icons.save, project_id, data, mime)
        try:
            project = await self._update(project_id, {"customIconRevision": revision})
        except BaseException:
            await asyncio.to_thread(self.icons.prune, project_id, None)
            raise
        await asyncio.to_thread(self.icons.prune, project_id, revision)
        return project

    async def clear_icon(self, project_id: str) -> ProjectRecord:
        """Back to the automatic icon: forget the revision, delete the stored image."""
        project = await self.get(project_id)
        if project.customIconRevision is not None:
            project = await self._update(project_id, {"customIconRevision": None})
        await asyncio.to_thread(self.icons.prune, project_id, None)
        return project

    async def icon(self, project_id: str) -> Icon | None:
        """The custom icon when one is recorded, else one discovered in the root, else none."""
        project = await self.get(project_id)
        if project.customIconRevision is not None:
            custom = await asyncio.to_thread(
                self.icons.load, project_id, project.customIconRevision
            )
            if custom is not None:
                return custom
        return await asyncio.to_thread(discover_icon, project.rootPath)

    # --------------------------------------------------------- reconciliation

    def observed_changes(self, project: ProjectRecord, facts: RepoFacts | None) -> dict[str, Any]:
        """The mutable fields (``kind``, ``projectKey``) whose observed value differs."""
        changes: dict[str, Any] = {}
        kind = project_kind(facts)
        if project.kind != kind:
            changes["kind"] = kind
        key = project_key_for(project.rootPath, facts)
        if project.projectKey != key:
            changes["projectKey"] = key
        return changes

    async def refresh(self, project: ProjectRecord, facts: RepoFacts | None) -> ProjectRecord:
        """Store newly observed ``kind``/``projectKey`` (and ``updatedAt``) if they changed.

        Id, root and names are never touched."""
        changes = self.observed_changes(project, facts)
        if not changes:
            return project
        return await self._update(project.projectId, changes)

    async def backfill_project_keys(self) -> int:
        """Give every project written without ``projectKey`` its key; returns how many."""
        filled = 0
        for project in await self.list(include_archived=True):
            if project.projectKey is not None:
                continue
            facts = await asyncio.to_thread(read_facts, project.rootPath)
            key = project_key_for(project.rootPath, facts)
            await self.store.projects.update(
                project.projectId, {"projectKey": key}, expect={"projectKey": None}
            )
            filled += 1
        return filled
