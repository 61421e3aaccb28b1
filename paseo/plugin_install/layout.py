"""The managed part of ``$PASEO_HOME/plugins/`` and the artifacts kept in each version.

``plugins/{pluginId}/{uuid}/`` holds one version: a Git checkout, an npm package with its
lockfile and dependency tree, or a wheel. Besides ``sources.json`` three entries are private to
the installer: ``.lock`` (one install operation at a time), ``.staging/`` (versions being
fetched, before their id is known) and ``.trash/`` (versions being deleted: a directory is
renamed here first, so a half-deleted tree is never at a path config.json could name).
"""

from __future__ import annotations

import configparser
import json
import uuid
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paseo_hookspecs import HOOK_GROUP
from paseo_hookspecs.errors import InvalidParams
from pydantic import BaseModel, ConfigDict, ValidationError

from paseo.fs import atomic_write_json, atomic_write_text, read_json
from paseo.home import HomeLayout
from paseo.plugins.manifests import (
    PluginManifest,
    manifest_toml,
    package_json_manifest,
    pyproject_manifest,
)

MARKER_FILE = ".paseo-install.json"
"""Written into every retained version: what was asked for and what was resolved."""


@dataclass(frozen=True)
class ManagedLayout:
    """Paths of the managed plugin tree under one state root."""

    home: HomeLayout

    @property
    def root(self) -> Path:
        return self.home.plugins

    @property
    def sources(self) -> Path:
        return self.home.plugin_sources

    @property
    def staging(self) -> Path:
        return self.root / ".staging"

    @property
    def trash(self) -> Path:
        return self.root / ".trash"

    @property
    def lock(self) -> Path:
        return self.root / ".lock"

    def plugin_dir(self, plugin_id: str) -> Path:
        return self.root / plugin_id

    def new_staging_dir(self) -> Path:
        """Create and return a fresh, empty staging directory."""
        self.staging.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.staging / uuid.uuid4().hex
        path.mkdir(mode=0o700)
        return path

    def owner(self, path: Path) -> str | None:
        """The plugin id whose managed version ``path`` is, or ``None`` for any other path."""
        resolved = path.resolve()
        if resolved.parent.parent == self.root.resolve():
            return resolved.parent.name
        return None


class InstallMarker(BaseModel):
    """``.paseo-install.json``: the request and its resolution, kept with the artifacts."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    kind: str
    spec: str
    ref: str | None = None
    """The Git ref the user asked for (``None``: the remote's default branch)."""
    revision: str | None = None
    """The resolved commit (git) or package version (npm, pypi)."""
    installedAt: str


def new_marker(kind: str, spec: str, *, ref: str | None, revision: str | None) -> InstallMarker:
    return InstallMarker(
        kind=kind,
        spec=spec,
        ref=ref,
        revision=revision,
        installedAt=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def write_marker(directory: Path, marker: InstallMarker) -> None:
    atomic_write_json(directory / MARKER_FILE, marker.model_dump(mode="json", exclude_none=True))


def read_marker(directory: Path) -> InstallMarker | None:
    """The marker of a retained version, or ``None`` when missing or unreadable."""
    try:
        return InstallMarker.model_validate(read_json(directory / MARKER_FILE))
    except (OSError, ValueError, ValidationError):
        return None


@dataclass(frozen=True)
class Identity:
    """What a prepared version is, read from its artifacts (no plugin code runs)."""

    name: str | None
    version: str | None
    manifest: PluginManifest | None
    entry_points: tuple[str, ...] = ()
    """``paseo`` entry-point names (wheels only; directories are read by the loader)."""
    package_dir: Path | None = None
    """The npm package's own directory."""
    wheel: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "package": self.name,
            "version": self.version,
            "providers": self.manifest.to_json()["providers"] if self.manifest else [],
        }


def _npm_identity(path: Path) -> Identity:
    try:
        names = list(read_json(path / "package.json").get("dependencies", {}))
    except (OSError, ValueError, AttributeError) as exc:
        raise InvalidParams(f"{path} holds no readable package.json: {exc}") from exc
    if len(names) != 1:
        raise InvalidParams(f"{path}: expected one npm package, found {names}")
    package_dir = path / "node_modules" / str(names[0])
    try:
        version = read_json(package_dir / "package.json").get("version")
    except (OSError, ValueError, AttributeError) as exc:
        raise InvalidParams(f"{package_dir}: unreadable package.json: {exc}") from exc
    return Identity(
        name=str(names[0]),
        version=str(version) if version is not None else None,
        manifest=package_json_manifest(package_dir),
        package_dir=package_dir,
    )


def _wheel_identity(path: Path) -> Identity:
    wheels = sorted(path.glob("*.whl"))
    if len(wheels) != 1:
        raise InvalidParams(f"{path}: expected one wheel, found {len(wheels)}")
    wheel = wheels[0]
    name, version = wheel.name.split("-")[:2]
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                parts = member.split("/")
                if (
                    len(parts) == 2
                    and parts[0].endswith(".dist-info")
                    and parts[1] == "entry_points.txt"
                ):
                    parser.read_string(archive.read(member).decode("utf-8"))
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise InvalidParams(f"cannot read {wheel.name}: {exc}") from exc
    points = tuple(sorted(parser[HOOK_GROUP])) if parser.has_section(HOOK_GROUP) else ()
    return Identity(name=name, version=version, manifest=None, entry_points=points, wheel=wheel)


def _pyproject_identity(path: Path) -> Identity:
    import tomllib

    try:
        with open(path / "pyproject.toml", "rb") as handle:
            project = tomllib.load(handle).get("project", {})
    except FileNotFoundError:
        project = {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidParams(f"cannot read {path / 'pyproject.toml'}: {exc}") from exc
    version = project.get("version")
    return Identity(
        name=project.get("name"),
        version=str(version) if version is not None else None,
        manifest=pyproject_manifest(path),
    )


def identify(kind: str, path: Path) -> Identity:
    """The identity of the version at ``path`` acquired from a ``kind`` source."""
    if kind == "npm":
        return _npm_identity(path)
    if kind == "pypi":
        return _wheel_identity(path)
    return _pyproject_identity(path)


def shim_module(plugin_id: str) -> str:
    """The module name of the generated entry point of a declarative npm plugin."""
    return "paseo_npm_" + plugin_id.replace("-", "_")


def write_declarative_plugin(
    path: Path, plugin_id: str, identity: Identity, manifest: PluginManifest
) -> None:
    """Make an npm version loadable as a directory plugin: a ``pyproject.toml`` carrying the
    manifest in ``[tool.paseo]`` and an entry point to an empty generated module.

    The loader wants at least one entry point; the module holds no hooks, so loading it runs
    nothing from the package. The package itself stays under ``node_modules/``.
    """
    module = shim_module(plugin_id)
    name = identity.name or plugin_id
    text = (
        "# Generated by `paseo plugins install` for an npm package; do not edit.\n"
        "[project]\n"
        f"name = {_quote(name)}\n"
        + (f"version = {_quote(identity.version)}\n" if identity.version else "")
        + "\n[project.entry-points.paseo]\n"
        f"{_quote(plugin_id)} = {_quote(module)}\n\n" + manifest_toml(manifest)
    )
    atomic_write_text(path / "pyproject.toml", text)
    atomic_write_text(
        path / f"{module}.py",
        f'"""Declarative plugin {plugin_id} ({name}): its providers are declared in\n'
        'pyproject.toml [tool.paseo]; this module contributes no hooks."""\n',
    )


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)
