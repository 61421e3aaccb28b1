"""``project.config.read`` / ``project.config.write``: a project's ``paseo.json`` edited whole.

The app's project settings read the file with a revision (its mtime and size, as the
TypeScript daemon reports them) and write it back naming the revision they read: a write over
a file that changed since (another editor, an agent) is refused as ``conflict`` with the
current revision in ``data``, never merged silently. A write is validated by the same parser
every reader of ``paseo.json`` uses (:func:`~paseo.worktrees.project_config.parse_project_config`:
a malformed file would run nothing, so none is written) and lands atomically.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.atomic import atomic_write_text
from paseo_hookspecs.context import RpcContext
from paseo_hookspecs.errors import Conflict
from pydantic import Field

from paseo.rpc.models import WireModel
from paseo.worktrees.project_config import CONFIG_FILE, ProjectConfigError, parse_project_config

if TYPE_CHECKING:
    from collections.abc import Callable

    from paseo_hookspecs.registration import RpcMethod

    from paseo.workspaces.service import Placement

MAX_CONFIG_BYTES = 1024 * 1024
"""A ``paseo.json`` larger than this is refused, read or written (it is a settings file)."""


class Revision(WireModel):
    mtimeMs: float
    size: int


class ConfigReadParams(WireModel):
    projectId: str = Field(min_length=1)


class ConfigReadResult(WireModel):
    projectId: str
    rootPath: str
    config: dict[str, Any] | None = Field(description="the file's JSON object; null: no file")
    revision: Revision | None = Field(description="null when there is no file")


class ConfigWriteParams(WireModel):
    projectId: str = Field(min_length=1)
    config: dict[str, Any] = Field(description="the whole new paseo.json object")
    expectedRevision: Revision | None = Field(
        description="the revision read before editing; null: the file must not exist yet"
    )


class ConfigWriteResult(WireModel):
    projectId: str
    rootPath: str
    config: dict[str, Any]
    revision: Revision


def _revision(path: Path) -> Revision | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return Revision(mtimeMs=found.st_mtime_ns / 1_000_000, size=found.st_size)


def _read(path: Path) -> tuple[dict[str, Any] | None, Revision | None]:
    revision = _revision(path)
    if revision is None:
        return None, None
    if revision.size > MAX_CONFIG_BYTES:
        raise parse_error(path, f"is larger than {MAX_CONFIG_BYTES} bytes")
    data = path.read_bytes()
    parse_project_config(data, path=str(path))  # malformed → ProjectConfigError
    document: dict[str, Any] = json.loads(data)
    return document, _revision(path)


def parse_error(path: Path, problem: str) -> ProjectConfigError:
    return ProjectConfigError(f"{path} {problem}", data={"path": str(path), "key": None})


def _write(path: Path, config: dict[str, Any], expected: Revision | None) -> Revision:
    text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    if len(text.encode()) > MAX_CONFIG_BYTES:
        raise parse_error(path, f"would be larger than {MAX_CONFIG_BYTES} bytes")
    parse_project_config(text.encode(), path=str(path))
    current = _revision(path)
    if current != expected:
        raise Conflict(
            f"{path} changed since it was read; read it again",
            data={"currentRevision": None if current is None else current.model_dump()},
        )
    atomic_write_text(path, text)
    written = _revision(path)
    assert written is not None  # just written
    return written


async def _root(placement: Placement, project_id: str) -> Path:
    project = await placement.projects.get(project_id)
    return Path(project.rootPath)


async def config_read(
    placement: Placement, ctx: RpcContext, params: ConfigReadParams
) -> ConfigReadResult:
    root = await _root(placement, params.projectId)
    config, revision = await asyncio.to_thread(_read, root / CONFIG_FILE)
    return ConfigReadResult(
        projectId=params.projectId, rootPath=os.fspath(root), config=config, revision=revision
    )


async def config_write(
    placement: Placement, ctx: RpcContext, params: ConfigWriteParams
) -> ConfigWriteResult:
    root = await _root(placement, params.projectId)
    revision = await asyncio.to_thread(
        _write, root / CONFIG_FILE, params.config, params.expectedRevision
    )
    return ConfigWriteResult(
        projectId=params.projectId,
        rootPath=os.fspath(root),
        config=params.config,
        revision=revision,
    )


def config_methods(method: Callable[..., RpcMethod]) -> list[RpcMethod]:
    """The two methods, made by the ``project`` group's method maker."""
    return [
        method(
            "project.config.read",
            config_read,
            ConfigReadParams,
            ConfigReadResult,
            "The project's paseo.json (validated) with its revision",
        ),
        method(
            "project.config.write",
            config_write,
            ConfigWriteParams,
            ConfigWriteResult,
            "Replace the project's paseo.json (validated, atomic; refused if it changed since "
            "expectedRevision)",
        ),
    ]
