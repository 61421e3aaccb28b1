"""Creation metadata of Paseo-owned worktrees: ``<worktrees root>/.metadata/<id>.json``.

A record is written in phase ``creating`` before ``git worktree add`` runs and moves to
``ready`` once the checkout exists, its cwd was validated, setup succeeded and the workspace was
registered. An exact retry of a request (same ``requestHash``) repairs a ``creating`` record or
reuses a ``ready`` one; any other request for the same id fails closed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from paseo.fs import atomic_write_json, read_json

METADATA_DIR = ".metadata"


class WorktreeMetadata(BaseModel):
    """One managed worktree's creation record."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    id: str
    phase: Literal["creating", "ready"]
    requestHash: str
    workspaceId: str
    projectId: str
    repoRoot: str
    worktreePath: str
    relativeCwd: str
    branch: str | None
    createdBranch: bool
    baseRef: str | None
    baseCommit: str | None
    port: int | None = None
    createdAt: str
    updatedAt: str


class MetadataStore:
    """The ``.metadata`` directory of one worktrees root. Blocking methods: call them in a
    worker thread."""

    def __init__(self, worktrees_root: str) -> None:
        self.directory = Path(worktrees_root) / METADATA_DIR

    def path(self, worktree_id: str) -> Path:
        return self.directory / f"{worktree_id}.json"

    def load(self, worktree_id: str) -> WorktreeMetadata | None:
        try:
            return WorktreeMetadata.model_validate(read_json(self.path(worktree_id)))
        except FileNotFoundError:
            return None

    def save(self, record: WorktreeMetadata) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.path(record.id), record.model_dump(mode="json"))

    def delete(self, worktree_id: str) -> None:
        self.path(worktree_id).unlink(missing_ok=True)

    def all(self) -> list[WorktreeMetadata]:
        records: list[WorktreeMetadata] = []
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return records
        for name in names:
            if name.endswith(".json") and not name.startswith("."):
                try:
                    records.append(
                        WorktreeMetadata.model_validate(read_json(self.directory / name))
                    )
                except (OSError, ValueError):
                    continue
        return records
