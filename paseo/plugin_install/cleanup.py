"""Crash cleanup: undo what an interrupted install, update or remove left behind.

Run with the install lock held, before every operation. config.json is the truth: a version
directory it does not name, a staging or trash directory, a ``sources.json`` record without a
config entry, a ``pypi`` environment holding another wheel than the active one are leftovers.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil

from paseo_hookspecs.errors import InvalidParams

from paseo.fs import is_temp_file
from paseo.plugin_install.entries import active_path, discard, read_entries
from paseo.plugin_install.ids import PLUGIN_ID
from paseo.plugin_install.layout import ManagedLayout, identify
from paseo.plugin_install.pypi_env import (
    distribution_of,
    install_wheel,
    installed_version,
    uninstall,
)
from paseo.plugin_install.sources_file import PypiPluginSource, delete_source, read_sources

_VERSION_NAME = re.compile(r"^[0-9a-f]{32}$")
"""Version directories are named by a uuid4 in hex."""


async def clean_up(layout: ManagedLayout, *, python: str, inherit: tuple[int, ...]) -> list[str]:
    """Remove what an interrupted operation left; return notes saying what was repaired.

    ``python`` runs pip for the ``pypi`` environment; ``inherit`` are the descriptors (the
    install lock) pip inherits.
    """
    removed: list[str] = await asyncio.to_thread(_clean_up_files, layout)
    notes = await _reconcile_pypi(layout, python=python, inherit=inherit)
    if removed:
        notes.append(f"removed {len(removed)} leftover(s) of an interrupted operation")
    return notes


def _clean_up_files(layout: ManagedLayout) -> list[str]:
    root = layout.root
    if not root.is_dir():
        return []
    entries = read_entries(layout.home.config)
    removed: list[str] = []
    for leftover in (layout.staging, layout.trash):
        if leftover.exists():
            shutil.rmtree(leftover, ignore_errors=True)
            removed.append(str(leftover))
    for child in sorted(root.iterdir()):
        if is_temp_file(child):
            child.unlink(missing_ok=True)
            removed.append(str(child))
            continue
        if child.name.startswith(".") or not child.is_dir():
            continue
        if not PLUGIN_ID.match(child.name):
            continue
        active = active_path(entries.get(child.name, {}))
        for version in sorted(child.iterdir()):
            # Only names this installer creates are touched: a user may keep a plugin
            # directory of their own under plugins/ and point config.json at it.
            if not _VERSION_NAME.match(version.name):
                continue
            if active is not None and version.resolve() == active:
                continue
            if version.is_dir() and not version.is_symlink():
                discard(layout, version)
            else:
                version.unlink()
            removed.append(str(version))
        if active is None:
            with contextlib.suppress(OSError):
                child.rmdir()
    # A record without a config entry is an install that never committed (or a remove
    # that did): config.json decides.
    sources = read_sources(layout.sources)
    for plugin_id, record in sources.items():
        if plugin_id not in entries and not isinstance(record, PypiPluginSource):
            delete_source(layout.sources, plugin_id)
    return removed


async def _reconcile_pypi(
    layout: ManagedLayout, *, python: str, inherit: tuple[int, ...]
) -> list[str]:
    notes: list[str] = []
    entries = await asyncio.to_thread(read_entries, layout.home.config)
    sources = await asyncio.to_thread(read_sources, layout.sources)
    for plugin_id, record in sources.items():
        if not isinstance(record, PypiPluginSource):
            continue
        entry = entries.get(plugin_id)
        active = active_path(entry) if entry else None
        if active is None:
            # Interrupted first install or remove: the environment must not keep an
            # unverified (or unwanted) distribution.
            distribution = distribution_of(record.remote)
            if distribution is not None:
                await uninstall(python, distribution, layout.root, inherit=inherit)
            await asyncio.to_thread(delete_source, layout.sources, plugin_id)
            notes.append(f"{plugin_id}: undid an interrupted pypi install or remove")
            continue
        try:
            identity = await asyncio.to_thread(identify, "pypi", active)
        except InvalidParams as exc:
            notes.append(f"{plugin_id}: cannot check the installed version: {exc.message}")
            continue
        assert identity.name is not None
        assert identity.wheel is not None
        installed = await asyncio.to_thread(installed_version, identity.name)
        if installed != identity.version:
            # An update died between pip and the config.json commit: put back the wheel
            # config.json still names.
            await install_wheel(python, identity.wheel, restore=True, inherit=inherit)
            notes.append(f"{plugin_id}: reinstalled the active version {identity.version}")
    return notes
