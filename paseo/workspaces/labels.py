"""The host-wide workspace label catalog, on the store's transactional label protocol.

Create, rename, recolour and delete act on the catalog; assign and unassign on one workspace.
A rename or delete rewrites every assignment in the same compound commit the store performs
(``store.labels``), a recolour is catalog-only, and a rename onto a name the host already has
is refused (``Conflict``). Changes are announced only after the store's commit point.
"""

from __future__ import annotations

from collections.abc import Sequence

from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import WorkspaceLabelDefinition, WorkspaceRecord, dump_record
from paseo_hookspecs.records.labels import is_reserved_label_name, normalize_label_name

from paseo.projects.common import Publish, no_publish, utc_now
from paseo.workspaces.provisioning import WorkspaceProvisioningService


def _checked_name(name: str) -> str:
    normalized = normalize_label_name(name)
    if not normalized:
        raise InvalidParams("a label name cannot be empty")
    if is_reserved_label_name(normalized):
        raise InvalidParams(f"{normalized!r} uses the reserved 'paseo:reserved:' prefix")
    return normalized


class LabelService:
    """See the module docstring."""

    def __init__(
        self,
        store: Store,
        workspaces: WorkspaceProvisioningService,
        publish: Publish = no_publish,
    ) -> None:
        self.store = store
        self.workspaces = workspaces
        self.publish = publish

    async def _announce_catalog(self) -> list[WorkspaceLabelDefinition]:
        labels = await self.store.labels.list()
        self.publish("label.catalogChanged", {"labels": [dump_record(x) for x in labels]})
        return labels

    async def list(self) -> list[WorkspaceLabelDefinition]:
        """The catalog, in display order."""
        return await self.store.labels.list()

    async def create(self, name: str, color: str) -> WorkspaceLabelDefinition:
        label = await self.store.labels.create(_checked_name(name), color)
        await self._announce_catalog()
        return label

    async def edit(
        self, name: str, *, new_name: str | None = None, color: str | None = None
    ) -> WorkspaceLabelDefinition:
        """Rename and/or recolour ``name`` in one commit."""
        if new_name is None and color is None:
            raise InvalidParams("give a new name, a new colour, or both")
        label = await self.store.labels.edit(
            name,
            new_name=_checked_name(new_name) if new_name is not None else None,
            color=color,
            now=utc_now(),
        )
        await self._announce_catalog()
        return label

    async def delete(self, name: str) -> None:
        """Remove the label and every assignment of it; ``NotFound`` when unknown."""
        if not await self.store.labels.delete(name, now=utc_now()):
            raise NotFound(f"no label named {name!r}", data={"name": name})
        await self._announce_catalog()

    async def assign(self, workspace_id: str, names: Sequence[str]) -> WorkspaceRecord:
        await self.workspaces.get(workspace_id)
        workspace = await self.store.labels.assign(workspace_id, list(names), now=utc_now())
        self.workspaces.announce(workspace)
        return workspace

    async def unassign(self, workspace_id: str, names: Sequence[str]) -> WorkspaceRecord:
        await self.workspaces.get(workspace_id)
        workspace = await self.store.labels.unassign(workspace_id, list(names), now=utc_now())
        self.workspaces.announce(workspace)
        return workspace
