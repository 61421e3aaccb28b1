"""The declarative plugin manifest: providers a plugin declares without Python code.

It lives in ``[tool.paseo]`` of a ``pyproject.toml`` or under the ``paseo`` key of an npm
``package.json``::

    {"providers": [{"id": "my-acp", "label": "My ACP agent", "bin": "my-agent",
                    "env": {"MY_AGENT_MODE": "acp"}}]}

``bin`` names an executable of the package (an npm ``bin`` entry, found in
``node_modules/.bin``) or a path relative to the package root.

Two rooms read it. The installer (:mod:`paseo.plugin_install`) validates and records it, and
writes the ``[tool.paseo]`` table for an npm package. The loader turns each provider a loaded
directory plugin declares into a :class:`DeclaredProvider`: an ACP agent the daemon runs as a
custom provider extending the built-in ``acp`` provider, exactly like a config.json
``agents.providers.<id>`` entry with ``"extends": "acp"``, whose command is the declared ``bin``
resolved inside the plugin's directory.

Reading a manifest runs no plugin code: it is TOML or JSON and a few path lookups.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from paseo_hookspecs.errors import InvalidParams
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

_ProviderId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]
_Text = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class ProviderManifest(BaseModel):
    """One declared agent provider (an ACP agent started from ``bin``)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    id: _ProviderId
    label: _Text
    bin: _Text
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("bin")
    @classmethod
    def _inside_package(cls, value: str) -> str:
        parts = value.replace("\\", "/").split("/")
        if value.startswith(("/", "\\")) or ".." in parts:
            raise ValueError("must name an executable inside the package")
        return value


class PluginManifest(BaseModel):
    """Everything a plugin declares without code."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    providers: list[ProviderManifest] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> PluginManifest:
        ids = [provider.id for provider in self.providers]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate provider ids: {', '.join(duplicates)}")
        return self

    def to_json(self) -> dict[str, Any]:
        """The manifest as stored and shown (``env`` omitted when empty)."""
        return {
            "providers": [provider.model_dump(exclude_defaults=True) for provider in self.providers]
        }


def parse_manifest(data: Any, where: str) -> PluginManifest:
    """Validate ``data``; raise :class:`InvalidParams` naming ``where`` and the problems."""
    try:
        return PluginManifest.model_validate(data)
    except ValidationError as exc:
        raise InvalidParams(f"invalid plugin manifest in {where}: {exc}") from exc


def pyproject_manifest(directory: Path) -> PluginManifest | None:
    """``[tool.paseo]`` of ``directory/pyproject.toml``, or ``None`` when absent."""
    path = directory / "pyproject.toml"
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidParams(f"cannot read {path}: {exc}") from exc
    section = data.get("tool", {}).get("paseo")
    return None if section is None else parse_manifest(section, f"{path} [tool.paseo]")


def package_json_manifest(package_dir: Path) -> PluginManifest | None:
    """The ``paseo`` key of ``package_dir/package.json``, or ``None`` when absent."""
    path = package_dir / "package.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InvalidParams(f"cannot read {path}: {exc}") from exc
    section = data.get("paseo") if isinstance(data, dict) else None
    return None if section is None else parse_manifest(section, f'{path} "paseo"')


def missing_bins(manifest: PluginManifest, root: Path, package_dir: Path | None) -> list[str]:
    """The ``bin`` values that name no file. A plain name is looked up as an npm bin link
    (``root/node_modules/.bin/<bin>``) or a file at the package root; a name with a ``/`` is a
    path inside the package (``package_dir``, else ``root``)."""
    missing = []
    base = package_dir or root
    for provider in manifest.providers:
        # The model already refused absolute paths and "..", so neither lookup leaves ``root``.
        found = (base / provider.bin).is_file()
        if not found and "/" not in provider.bin:
            found = (root / "node_modules" / ".bin" / provider.bin).is_file()
        if not found:
            missing.append(provider.bin)
    return missing


def _toml_string(value: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes.
    return json.dumps(value, ensure_ascii=False)


def manifest_toml(manifest: PluginManifest) -> str:
    """``manifest`` as a ``[tool.paseo]`` TOML table."""
    lines = ["[tool.paseo]", "providers = ["]
    for provider in manifest.providers:
        env = ", ".join(f"{_toml_string(k)} = {_toml_string(v)}" for k, v in provider.env.items())
        lines.append(
            f"  {{ id = {_toml_string(provider.id)}, label = {_toml_string(provider.label)}, "
            f"bin = {_toml_string(provider.bin)}, env = {{ {env} }} }},"
        )
    lines.append("]")
    return "\n".join(lines) + "\n"


# --- providers declared by loaded directory plugins ----------------------------------------------

ACP_PROVIDER = "acp"
"""The built-in provider every declared provider is driven by."""


class ManifestError(Exception):
    """A directory plugin's manifest cannot be read or is invalid."""


@dataclass(frozen=True)
class DeclaredProvider:
    """One provider a plugin's manifest declares, with its ``bin`` resolved to a path."""

    plugin: str
    """The id of the plugin declaring it (its key in config.json ``plugins``)."""
    id: str
    label: str
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def config_entry(self) -> dict[str, Any]:
        """The provider as an ``agents.providers.<id>`` entry of config.json would define it,
        plus ``plugin`` naming where it came from."""
        return {
            "extends": ACP_PROVIDER,
            "label": self.label,
            "command": list(self.command),
            "env": dict(self.env),
            "plugin": self.plugin,
        }


def _npm_package_dir(root: Path) -> Path | None:
    """The package's own directory when ``root`` is an npm install made by ``paseo plugins
    install`` (a ``package.json`` whose only dependency is the package), else ``None``."""
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    dependencies = data.get("dependencies") if isinstance(data, dict) else None
    if not isinstance(dependencies, dict) or len(dependencies) != 1:
        return None
    package_dir = root / "node_modules" / str(next(iter(dependencies)))
    return package_dir if package_dir.is_dir() else None


def resolve_bin(root: Path, name: str) -> Path:
    """The executable ``name`` of the plugin at ``root``, looked up the way the installer's
    manifest check does: a file in the package (the npm package's own directory for an npm
    install, else ``root``), else, for a plain name, the npm bin link
    ``root/node_modules/.bin/<name>``.

    When neither exists the path is returned anyway, so the provider's availability check names
    the missing file.
    """
    base = _npm_package_dir(root) or root
    in_package = base / name
    if in_package.is_file() or "/" in name:
        return in_package
    return root / "node_modules" / ".bin" / name


def declared_providers(plugin_id: str, root: Path) -> list[DeclaredProvider]:
    """The providers ``[tool.paseo]`` of ``root/pyproject.toml`` declares (none without a
    manifest); :class:`ManifestError` when it is unreadable or invalid."""
    try:
        manifest = pyproject_manifest(root)
    except InvalidParams as exc:
        raise ManifestError(exc.message) from exc
    if manifest is None:
        return []
    return [
        DeclaredProvider(
            plugin=plugin_id,
            id=provider.id,
            label=provider.label,
            command=(str(resolve_bin(root, provider.bin)),),
            env=dict(provider.env),
        )
        for provider in manifest.providers
    ]
