"""``project.*``: the project registry over the wire."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections import OrderedDict
from typing import TYPE_CHECKING

from paseo_hookspecs.context import RpcContext
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import ProjectRecord
from paseo_hookspecs.registration import RpcMethodGroup
from pydantic import Field

from paseo.projects.icons import MAX_ICON_BYTES, Icon
from paseo.rpc.dispatch import Encoded
from paseo.rpc.models import WireModel
from paseo.workspaces.adapter import WorkspacesRef, placement_methods
from paseo.workspaces.project_config_rpc import config_methods

if TYPE_CHECKING:
    from paseo.workspaces.service import Placement


class ProjectAddParams(WireModel):
    path: str = Field(description="absolute directory; the exact root of the project")
    name: str | None = Field(default=None, description="custom name")


class ProjectResult(WireModel):
    project: ProjectRecord


class ProjectAddResult(WireModel):
    project: ProjectRecord
    created: bool = Field(description="false when an active project already had this root")


class ProjectListParams(WireModel):
    includeArchived: bool = False


class ProjectListResult(WireModel):
    projects: list[ProjectRecord]


class ProjectIdParams(WireModel):
    projectId: str = Field(min_length=1)


class ProjectRenameParams(WireModel):
    projectId: str = Field(min_length=1)
    name: str | None = Field(description="the custom name; null returns to the derived name")


class ProjectSetIconParams(WireModel):
    projectId: str = Field(min_length=1)
    data: str = Field(
        max_length=(MAX_ICON_BYTES * 4) // 3 + 4,
        description="the image bytes, base64; PNG, JPEG, GIF, WebP or SVG up to 1 MiB",
    )


class ProjectIconResult(WireModel):
    source: str | None = Field(description="custom, discovered, or null when there is no icon")
    mimeType: str | None = None
    data: str | None = Field(default=None, description="base64 image bytes")
    revision: str | None = None


async def project_add(
    placement: Placement, ctx: RpcContext, params: ProjectAddParams
) -> ProjectAddResult:
    root = await placement.workspaces.check_path(params.path, session_kind=ctx.session_kind)
    project, created = await placement.projects.add(root, name=params.name)
    return ProjectAddResult(project=project, created=created)


async def project_list(
    placement: Placement, ctx: RpcContext, params: ProjectListParams
) -> ProjectListResult:
    projects = await placement.projects.list(include_archived=params.includeArchived)
    return ProjectListResult(projects=projects)


async def project_get(
    placement: Placement, ctx: RpcContext, params: ProjectIdParams
) -> ProjectResult:
    return ProjectResult(project=await placement.projects.get(params.projectId))


async def project_rename(
    placement: Placement, ctx: RpcContext, params: ProjectRenameParams
) -> ProjectResult:
    project = await placement.projects.rename(params.projectId, params.name)
    return ProjectResult(project=project)


async def project_archive(
    placement: Placement, ctx: RpcContext, params: ProjectIdParams
) -> ProjectResult:
    return ProjectResult(project=await placement.projects.archive(params.projectId))


async def project_set_icon(
    placement: Placement, ctx: RpcContext, params: ProjectSetIconParams
) -> ProjectResult:
    try:
        data = base64.b64decode(params.data, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams("data is not valid base64") from None
    project = await placement.projects.set_icon(params.projectId, data)
    return ProjectResult(project=project)


async def project_clear_icon(
    placement: Placement, ctx: RpcContext, params: ProjectIdParams
) -> ProjectResult:
    return ProjectResult(project=await placement.projects.clear_icon(params.projectId))


SHARED_ICON_CHARS = 8 << 20
"""Encoded icon answers kept for sharing (characters, all icons together): a few 1 MiB icons."""


class IconAnswers:
    """``project.icon``: each icon's answer is encoded once and shared by every answer that
    carries it, so N clients (or one client asking N times) queue one copy of the payload.

    Keyed by the icon's content, not only its revision: a discovered icon has none, and its
    file may change. The least recently asked icons are forgotten past
    :data:`SHARED_ICON_CHARS`.
    """

    def __init__(self, limit: int = SHARED_ICON_CHARS) -> None:
        self._limit = limit
        self._chars = 0
        self._answers: OrderedDict[tuple[str, str, str | None, bytes], Encoded] = OrderedDict()

    def answer(self, icon: Icon) -> Encoded:
        digest = hashlib.blake2b(icon.data, digest_size=16).digest()
        key = (icon.source, icon.mime_type, icon.revision, digest)
        found = self._answers.get(key)
        if found is not None:
            self._answers.move_to_end(key)
            return found
        found = Encoded.of(
            ProjectIconResult(
                source=icon.source,
                mimeType=icon.mime_type,
                data=base64.b64encode(icon.data).decode("ascii"),
                revision=icon.revision,
            )
        )
        self._answers[key] = found
        self._chars += len(found.json)
        while self._chars > self._limit and len(self._answers) > 1:
            _, dropped = self._answers.popitem(last=False)
            self._chars -= len(dropped.json)
        return found

    async def handler(
        self, placement: Placement, ctx: RpcContext, params: ProjectIdParams
    ) -> ProjectIconResult | Encoded:
        icon = await placement.projects.icon(params.projectId)
        if icon is None:
            return ProjectIconResult(source=None)
        return self.answer(icon)


def project_group(ref: WorkspacesRef) -> RpcMethodGroup:
    """The ``project`` method group."""
    method = placement_methods(ref)
    return RpcMethodGroup(
        "project",
        [
            method(
                "project.add",
                project_add,
                ProjectAddParams,
                ProjectAddResult,
                "Open a directory as a project (idempotent for an active exact root)",
            ),
            method(
                "project.list", project_list, ProjectListParams, ProjectListResult, "List projects"
            ),
            method("project.get", project_get, ProjectIdParams, ProjectResult, "One project"),
            method(
                "project.rename",
                project_rename,
                ProjectRenameParams,
                ProjectResult,
                "Set or clear a project's custom name",
            ),
            method(
                "project.archive",
                project_archive,
                ProjectIdParams,
                ProjectResult,
                "Archive a project (its root may be added again as a new project)",
            ),
            method(
                "project.setIcon",
                project_set_icon,
                ProjectSetIconParams,
                ProjectResult,
                "Upload a custom icon (validated image bytes, base64)",
            ),
            method(
                "project.clearIcon",
                project_clear_icon,
                ProjectIdParams,
                ProjectResult,
                "Return to the automatic icon; deletes the stored image",
            ),
            method(
                "project.icon",
                IconAnswers().handler,
                ProjectIdParams,
                ProjectIconResult,
                "The project's icon: custom, else discovered in its directory",
            ),
            *config_methods(method),
        ],
    )
