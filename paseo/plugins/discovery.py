"""Finding plugins without importing them: entry points and directory plugins.

Everything here reads metadata only (distribution metadata, ``pyproject.toml``); importing a
plugin is the loader's job and happens only for enabled plugins.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from paseo.plugins.extras import split_target
from paseo.plugins.records import BUILTIN_DISTRIBUTION


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Candidate:
    """A plugin found by discovery, not yet imported."""

    name: str
    target: str
    """``module`` or ``module:attribute``."""
    group: str
    distribution: str | None
    version: str | None
    builtin: bool
    source: str
    path: Path | None = None
    extras: tuple[str, ...] = ()
    """The extras of its distribution the entry point needs (``module:attribute [extra]``),
    see :mod:`paseo.plugins.extras`."""


class EntryPointScan:
    """One pass over the installed distributions' entry points, for every group at once.

    Listing entry points reads every installed distribution's metadata; the daemon needs four
    groups at start-up, so it scans once and asks this for each group.
    """

    def __init__(self) -> None:
        self._points = metadata.entry_points()
        self._distributions: dict[int, tuple[str | None, str | None]] = {}

    def candidates(self, group: str) -> list[Candidate]:
        """Installed entry points of ``group``, built-ins first, each sorted by name."""
        found: list[Candidate] = []
        for ep in self._points.select(group=group):
            dist_name, version = self._describe(ep.dist)
            target, extras = split_target(ep.value)
            found.append(
                Candidate(
                    name=ep.name,
                    target=target,
                    group=group,
                    distribution=dist_name,
                    version=version,
                    builtin=dist_name is not None and _normalize(dist_name) == BUILTIN_DISTRIBUTION,
                    source="entrypoint",
                    extras=extras,
                )
            )
        found.sort(key=lambda c: (not c.builtin, c.name))
        return found

    def _describe(self, dist: metadata.Distribution | None) -> tuple[str | None, str | None]:
        if dist is None:
            return None, None
        known = self._distributions.get(id(dist))
        if known is None:
            # Each read of ``metadata`` parses the distribution's METADATA file again.
            known = self._distributions[id(dist)] = (dist.metadata["Name"], dist.version)
        return known


def entry_point_candidates(group: str) -> Iterator[Candidate]:
    """Installed entry points of ``group``, built-ins first, each group sorted by name."""
    yield from EntryPointScan().candidates(group)


class DirectoryPluginError(Exception):
    """A directory plugin's metadata cannot be read."""


def directory_candidates(plugin_id: str, path: Path, group: str) -> list[Candidate]:
    """The ``group`` entry points a directory plugin declares in its ``pyproject.toml``."""
    pyproject = path / "pyproject.toml"
    try:
        with open(pyproject, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise DirectoryPluginError(f"{pyproject} not found") from exc
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DirectoryPluginError(f"cannot read {pyproject}: {exc}") from exc
    project = data.get("project", {})
    points = project.get("entry-points", {}).get(group, {})
    if not isinstance(points, dict):
        raise DirectoryPluginError(f"{pyproject}: [project.entry-points.{group}] is not a table")
    version = project.get("version")
    candidates = []
    for ep_name, target in sorted(points.items()):
        name = plugin_id if len(points) == 1 else f"{plugin_id}:{ep_name}"
        module, extras = split_target(str(target))
        candidates.append(
            Candidate(
                name=name,
                target=module,
                group=group,
                distribution=project.get("name"),
                version=str(version) if version is not None else None,
                builtin=False,
                source="directory",
                path=path,
                extras=extras,
            )
        )
    return candidates


def import_root(path: Path) -> Path:
    """The directory to put on ``sys.path`` for a directory plugin (``src/`` layout aware)."""
    src = path / "src"
    return src if src.is_dir() else path
