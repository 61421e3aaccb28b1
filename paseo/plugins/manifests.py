"""Providers a directory plugin declares in its manifest, made ready to run.

A plugin's ``pyproject.toml`` may carry ``[tool.paseo] providers = [{id, label, bin, env}]``
(see :mod:`paseo.plugin_install.manifest`; ``paseo plugins install`` writes that table for an npm
package). Each declared provider is an ACP agent: the daemon turns it into a custom provider
extending the built-in ``acp`` provider, exactly like a config.json ``agents.providers.<id>``
entry with ``"extends": "acp"``, whose command is the declared ``bin`` resolved inside the
plugin's directory.

Reading a manifest runs no plugin code: it is TOML and a few path lookups.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    from paseo_hookspecs.errors import InvalidParams

    from paseo.plugin_install.manifest import pyproject_manifest

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
