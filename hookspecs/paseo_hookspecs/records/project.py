"""The project registry: ``projects/projects.json``, a JSON array of project records.

A project is the exact root a user selected. New ids are opaque ``prj_<16 hex>``; records written
before that keep their remote-shaped (``remote:github.com/owner/repo``) or path-shaped ids, which
stay readable and are never rekeyed, so ``projectId`` accepts any non-empty string.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, RootModel

from paseo_hookspecs.records._base import ROOT_CONFIG, RecordModel

__all__ = ["ProjectKind", "ProjectRecord", "ProjectsFile"]

ProjectKind = Literal["git", "non_git"]
"""Mutable Git observation about ``rootPath``; never a membership key."""


class ProjectRecord(RecordModel):
    """One project: an exact, lexically normalized root plus its names and icon.

    ``projectKey``, ``customName`` and ``customIconRevision`` were added over time; absent on read
    they are ``null`` and they are always written. ``archivedAt`` is required (``null`` when
    active).
    """

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset(
        {"projectKey", "customName", "customIconRevision"}
    )

    projectId: Annotated[str, Field(min_length=1)]
    rootPath: str
    kind: ProjectKind
    displayName: str
    projectKey: str | None = None
    customName: str | None = None
    customIconRevision: str | None = None
    createdAt: str
    updatedAt: str
    archivedAt: str | None


class ProjectsFile(RootModel[list[ProjectRecord]]):
    """The whole ``projects/projects.json`` registry."""

    model_config = ROOT_CONFIG
