"""The prepare → verify → swap steps every install and update goes through.

1. **Prepare** the new version in a fresh staging directory through the source's ``prepare``
   (no plugin code runs), then move it to ``plugins/{pluginId}/{uuid}/``.
2. **Verify** it in a child process (see :mod:`paseo.plugin_install.verify`).
3. **Swap**: write ``sources.json``, then point ``plugins.<id>`` of config.json at the new
   directory (one atomic write: the commit point), then delete the previous version.

A failure before the commit point removes the new directory (:meth:`Transaction.drop_new`) and
leaves the previous version active and untouched. A ``pypi`` plugin is the exception that must
touch shared state before the commit: its wheel is installed into the environment to be
verified, and on failure the previous wheel (kept in its own ``{uuid}`` directory) is
reinstalled, or the distribution is removed if there was none.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

from paseo.plugin_install.entries import discard, read_entries, update_entry
from paseo.plugin_install.layout import (
    Identity,
    ManagedLayout,
    identify,
    new_marker,
    write_declarative_plugin,
    write_marker,
)
from paseo.plugin_install.lock import InstallLock
from paseo.plugin_install.outcome import Outcome
from paseo.plugin_install.pypi_env import install_wheel, uninstall
from paseo.plugin_install.sources_file import (
    GitPluginSource,
    NpmPluginSource,
    PypiPluginSource,
    SourceRecord,
    delete_source,
    put_source,
    read_sources,
)
from paseo.plugin_install.verify import verify
from paseo.plugins.manifests import PluginManifest, pyproject_manifest


class Transaction:
    """The steps of installing one version under one state root, run with ``lock`` held.

    ``python`` is the interpreter verification and pip run with; ``verify_timeout`` bounds one
    verification.
    """

    def __init__(
        self, layout: ManagedLayout, lock: InstallLock, *, python: str, verify_timeout: float
    ) -> None:
        self.layout = layout
        self.lock = lock
        self.python = python
        self.verify_timeout = verify_timeout

    # ------------------------------------------------------------------ prepare

    async def prepare(self, source: PluginSource, spec: str) -> tuple[PreparedPlugin, Path]:
        """Fetch ``spec`` into a fresh staging directory; returns it with what was prepared."""
        staging = await asyncio.to_thread(self.layout.new_staging_dir)
        try:
            prepared = await source.prepare(spec, staging)
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, staging, True)
            raise
        return prepared, staging

    async def place(self, plugin_id: str, staging: Path) -> Path:
        """Move a prepared version from staging to ``plugins/{id}/{uuid}``."""

        def move() -> Path:
            parent = self.layout.plugin_dir(plugin_id)
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            target = parent / staging.name
            os.rename(staging, target)
            return target

        return await asyncio.to_thread(move)

    @staticmethod
    async def effective_manifest(
        kind: str,
        identity: Identity,
        supplied: PluginManifest | None,
        previous: Path | None,
    ) -> PluginManifest | None:
        """The manifest an npm version is recorded with: the one given on the command line,
        else the package's own, else (on update) the one the previous version carried."""
        if kind != "npm":
            if supplied is not None:
                raise InvalidParams(
                    "--provider-id/--provider-label/--bin apply to npm packages; declare "
                    "providers in [tool.paseo] of pyproject.toml instead"
                )
            return None
        if supplied is not None:
            return supplied
        if identity.manifest is not None:
            return identity.manifest
        if previous is not None:
            return await asyncio.to_thread(pyproject_manifest, previous)
        raise InvalidParams(
            f'npm package {identity.name} declares no "paseo" manifest; describe its provider '
            "with --provider-id, --provider-label and --bin"
        )

    async def write_artifacts(
        self,
        *,
        kind: str,
        plugin_id: str,
        path: Path,
        spec: str,
        prepared: PreparedPlugin,
        identity: Identity,
        manifest: PluginManifest | None,
    ) -> None:
        """Write the install marker (and an npm package's declarative plugin) into ``path``."""
        ref = None
        if kind == "git":
            from urllib.parse import urlsplit

            head, at, tail = spec.rpartition("@")
            if at and "/" not in tail and "://" in head and urlsplit(head[4:]).scheme:
                ref = tail
        marker = new_marker(kind, spec, ref=ref, revision=prepared.revision)
        await asyncio.to_thread(write_marker, path, marker)
        if kind == "npm" and manifest is not None:
            await asyncio.to_thread(write_declarative_plugin, path, plugin_id, identity, manifest)

    def drop_new(self, staging: Path, placed: Path | None) -> None:
        """Remove a version that did not commit, wherever it got to."""
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        if placed is not None:
            discard(self.layout, placed)
            with contextlib.suppress(OSError):
                placed.parent.rmdir()

    # ------------------------------------------------------------ verify and swap

    async def verify_and_commit(
        self,
        plugin_id: str,
        kind: str,
        path: Path,
        *,
        identity: Identity,
        prepared: PreparedPlugin,
        entry: dict[str, Any],
        enabled: bool | None,
        previous: Path | None,
    ) -> Outcome:
        """Verify the version at ``path``, make it the active one and delete ``previous``.

        The returned outcome's ``action`` is for the caller to fill in.
        """
        settings = entry.get("settings")
        if kind == "pypi":
            assert prepared.remote is not None
            report = await self._install_verified_wheel(
                plugin_id, identity, settings, previous, prepared.remote
            )
        else:
            report = await self._verify_directory(plugin_id, kind, path, settings)
        record = _source_record(kind, prepared)
        if record is not None:
            await asyncio.to_thread(put_source, self.layout.sources, plugin_id, record)
        config = self.layout.home.config
        await asyncio.to_thread(
            update_entry,
            config,
            plugin_id,
            lambda current: _entry_with(
                current, path=path, directory=kind != "pypi", enabled=enabled
            ),
        )
        if previous is not None and previous != path:
            await asyncio.to_thread(discard, self.layout, previous)
        final = await asyncio.to_thread(read_entries, config)
        return Outcome(
            id=plugin_id,
            kind=kind,
            action="",
            path=str(path),
            revision=prepared.revision,
            enabled=final.get(plugin_id, {}).get("enabled", True) is not False,
            hooks=list(report.get("hooks", [])),
            providers=list(report.get("providers", [])),
            manifest=report.get("manifest")
            or (identity.manifest.to_json() if identity.manifest else None),
        )

    async def _verify_directory(
        self, plugin_id: str, kind: str, path: Path, settings: Any
    ) -> dict[str, Any]:
        request = {
            "mode": "directory",
            "id": plugin_id,
            "kind": kind,
            "path": str(path),
            "settings": settings,
        }
        return await self._run_verifier(request)

    async def _verify_entry_points(
        self, plugin_id: str, identity: Identity, settings: Any
    ) -> dict[str, Any]:
        request = {
            "mode": "entrypoint",
            "id": plugin_id,
            "kind": "pypi",
            "entryPoints": list(identity.entry_points),
            "settings": settings,
        }
        return await self._run_verifier(request)

    async def _run_verifier(self, request: dict[str, Any]) -> dict[str, Any]:
        # The verifier's scratch directory lives in staging, which cleanup empties after a crash.
        await asyncio.to_thread(self.layout.staging.mkdir, 0o700, True, True)
        return await verify(
            request,
            python=self.python,
            cwd=self.layout.staging,
            time_limit=self.verify_timeout,
            inherit=self.lock.held,
        )

    async def _install_verified_wheel(
        self,
        plugin_id: str,
        identity: Identity,
        settings: Any,
        previous: Path | None,
        remote: str,
    ) -> dict[str, Any]:
        assert identity.wheel is not None
        assert identity.name is not None
        held = self.lock.held
        if previous is None:
            # Record the intent first: if we die after pip but before the commit, cleanup sees
            # a pypi record without a config entry and removes the unverified distribution.
            record = PypiPluginSource(kind="pypi", remote=remote)
            sources = await asyncio.to_thread(read_sources, self.layout.sources)
            if plugin_id not in sources:
                await asyncio.to_thread(put_source, self.layout.sources, plugin_id, record)
        try:
            await install_wheel(self.python, identity.wheel, inherit=held)
            return await self._verify_entry_points(plugin_id, identity, settings)
        except BaseException:
            if previous is not None:
                old = await asyncio.to_thread(identify, "pypi", previous)
                assert old.wheel is not None
                await install_wheel(self.python, old.wheel, restore=True, inherit=held)
            else:
                await uninstall(self.python, identity.name, self.layout.root, inherit=held)
                await asyncio.to_thread(delete_source, self.layout.sources, plugin_id)
            raise


def _source_record(kind: str, prepared: PreparedPlugin) -> SourceRecord | None:
    if kind == "git":
        assert prepared.remote is not None
        return GitPluginSource(kind="git", remote=prepared.remote)
    if kind == "npm":
        return NpmPluginSource(kind="npm")
    if kind == "pypi":
        assert prepared.remote is not None
        return PypiPluginSource(kind="pypi", remote=prepared.remote)
    return None


def _entry_with(
    entry: dict[str, Any], *, path: Path, directory: bool, enabled: bool | None
) -> dict[str, Any]:
    new = dict(entry)
    if directory:
        new["source"] = "directory"
    else:
        new.pop("source", None)
    new["path"] = str(path)
    if enabled is not None:
        new["enabled"] = enabled
    elif "enabled" not in new:
        new["enabled"] = True
    return new
