"""The ``plugins`` entries of config.json as the installer reads and changes them, and the
trash through which it deletes version directories."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from paseo.plugin_install.layout import ManagedLayout


def read_entries(config: Path) -> dict[str, dict[str, Any]]:
    """config.json's ``plugins`` entries, raw (the loader validates them, not us)."""
    from paseo.config.raw import read_document

    document, _ = read_document(config)
    plugins = document.get("plugins")
    if not isinstance(plugins, dict):
        return {}
    return {k: v for k, v in plugins.items() if isinstance(v, dict)}


def update_entry(
    config: Path, plugin_id: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> None:
    """Replace ``plugins.<plugin_id>`` with ``change(current)`` (``None`` removes it), one
    atomic write of config.json that leaves every other key as it was."""
    from paseo.config.load import update_file

    def apply(document: dict[str, Any]) -> dict[str, Any]:
        plugins = dict(document.get("plugins") or {})
        entry = change(dict(plugins.get(plugin_id) or {}))
        if entry is None:
            plugins.pop(plugin_id, None)
        else:
            plugins[plugin_id] = entry
        result = dict(document)
        if plugins:
            result["plugins"] = plugins
        else:
            result.pop("plugins", None)
        return result

    config.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    update_file(config, apply)


def active_path(entry: Mapping[str, Any]) -> Path | None:
    """The version directory a ``plugins.<id>`` entry points at, resolved."""
    path = entry.get("path")
    if not isinstance(path, str) or not path:
        return None
    return Path(path).resolve()


def discard(layout: ManagedLayout, path: Path) -> None:
    """Delete a directory by first renaming it into the trash, so no half-deleted tree is ever
    left at a path config.json could name."""
    if not path.exists():
        return
    layout.trash.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = layout.trash / uuid.uuid4().hex
    os.rename(path, target)
    shutil.rmtree(target, ignore_errors=True)
