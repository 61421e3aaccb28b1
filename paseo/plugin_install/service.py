"""Install, update and remove managed plugins: the operations ``paseo plugins`` runs.

Every change takes the install lock (:mod:`paseo.plugin_install.lock`: one operation at a time
per state root), cleans up what an earlier crash left (:mod:`paseo.plugin_install.cleanup`),
then goes through the prepare → verify → swap steps of :mod:`paseo.plugin_install.transaction`,
each of which may fail or be killed without harming the active version.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, Unavailable
from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

from paseo.home import HomeLayout
from paseo.plugin_install.cleanup import clean_up
from paseo.plugin_install.entries import active_path, discard, read_entries, update_entry
from paseo.plugin_install.ids import (
    builtin_names,
    check_not_builtin,
    default_plugin_id,
    validate_plugin_id,
)
from paseo.plugin_install.layout import Identity, ManagedLayout, identify, read_marker, write_marker
from paseo.plugin_install.lock import InstallLock
from paseo.plugin_install.outcome import Outcome
from paseo.plugin_install.pypi_env import uninstall
from paseo.plugin_install.sources_file import (
    GitPluginSource,
    PypiPluginSource,
    SourceRecord,
    delete_source,
    read_sources,
)
from paseo.plugin_install.spec import canonical_spec
from paseo.plugin_install.transaction import Transaction
from paseo.plugin_install.verify import DEFAULT_TIMEOUT
from paseo.plugins.manifests import PluginManifest, pyproject_manifest


def _check_pypi_id(plugin_id: str) -> None:
    # The loader disables a plugin by name, so a pypi entry point named like a built-in would
    # switch both off or both on: shadowing cannot work for installed distributions.
    if plugin_id in builtin_names():
        raise InvalidParams(f"a pypi plugin cannot take the built-in id {plugin_id!r}")


def _check_same_package(plugin_id: str, kind: str, current: Identity, fetched: Identity) -> None:
    if kind in ("npm", "pypi") and fetched.name != current.name:
        raise Conflict(f"{plugin_id} is {current.name}, but the update fetched {fetched.name}")


class PluginInstaller:
    """Managed plugins of one state root.

    ``sources`` are the registered :class:`PluginSource` objects keyed by kind (from the
    ``paseo_register_plugin_sources`` hook). ``python`` is the interpreter verification and pip
    run with: the daemon's own.
    """

    def __init__(
        self,
        home: HomeLayout,
        sources: Mapping[str, PluginSource],
        *,
        python: str = sys.executable,
        verify_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.home = home
        self.layout = ManagedLayout(home)
        self.sources = dict(sources)
        self.python = python
        self._lock = InstallLock(self.layout)
        self._transaction = Transaction(
            self.layout, self._lock, python=python, verify_timeout=verify_timeout
        )

    async def _cleanup(self) -> list[str]:
        """Repair what an interrupted operation left (the caller holds the lock)."""
        return await clean_up(self.layout, python=self.python, inherit=self._lock.held)

    def _source_for(self, spec: str) -> PluginSource:
        for source in self.sources.values():
            if source.matches(spec):
                return source
        kinds = ", ".join(sorted(self.sources)) or "none registered"
        raise NotFound(f"no plugin source understands {spec!r} (sources: {kinds})")

    def _check_new_id(self, plugin_id: str, entries: Mapping[str, Any], allow_shadow: bool) -> None:
        validate_plugin_id(plugin_id)
        entry = entries.get(plugin_id) or {}
        if entry.get("path") or plugin_id in read_sources(self.layout.sources):
            raise Conflict(
                f"plugin {plugin_id!r} is already installed; use `paseo plugins update "
                f"{plugin_id}` or `paseo plugins remove {plugin_id}` first"
            )
        check_not_builtin(plugin_id, allow_shadow=allow_shadow)

    # ------------------------------------------------------------------ install

    async def install(
        self,
        spec: str,
        *,
        plugin_id: str | None = None,
        enabled: bool | None = None,
        allow_builtin_shadow: bool = False,
        manifest: PluginManifest | None = None,
        allow_scripts: bool = False,
        cwd: Path | None = None,
    ) -> Outcome:
        """Fetch, verify and activate a new plugin from ``spec`` (typed in ``cwd``).

        ``manifest`` describes an npm package's providers when it has no manifest of its own;
        ``allow_scripts`` lets npm run the package's install scripts.
        """
        canonical = await asyncio.to_thread(canonical_spec, spec, cwd or Path.cwd())
        if allow_scripts:
            if not canonical.startswith("npm:"):
                raise InvalidParams("--allow-scripts applies to npm packages only")
            canonical = "npm+scripts:" + canonical.removeprefix("npm:")
        source = self._source_for(canonical)
        if plugin_id is not None:
            validate_plugin_id(plugin_id)
        async with self._lock.hold():
            repaired = await self._cleanup()
            entries = await asyncio.to_thread(read_entries, self.home.config)
            if plugin_id is not None:
                self._check_new_id(plugin_id, entries, allow_builtin_shadow)
            prepared, staging = await self._transaction.prepare(source, canonical)
            in_place = prepared.path.resolve() != staging.resolve()
            placed: Path | None = None
            try:
                identity = await asyncio.to_thread(identify, source.kind, prepared.path)
                pid = plugin_id or self._default_id(source.kind, identity, prepared)
                if plugin_id is None:
                    self._check_new_id(pid, entries, allow_builtin_shadow)
                if source.kind == "pypi":
                    _check_pypi_id(pid)
                effective = await self._transaction.effective_manifest(
                    source.kind, identity, manifest, previous=None
                )
                if in_place:
                    await asyncio.to_thread(staging.rmdir)
                    path = prepared.path.resolve()
                else:
                    placed = await self._transaction.place(pid, staging)
                    path = placed
                    await self._transaction.write_artifacts(
                        kind=source.kind,
                        plugin_id=pid,
                        path=path,
                        spec=canonical,
                        prepared=prepared,
                        identity=identity,
                        manifest=effective,
                    )
                outcome = await self._transaction.verify_and_commit(
                    pid,
                    source.kind,
                    path,
                    identity=await asyncio.to_thread(identify, source.kind, path),
                    prepared=prepared,
                    entry=entries.get(pid) or {},
                    enabled=enabled,
                    previous=None,
                )
            except BaseException:
                await asyncio.to_thread(self._transaction.drop_new, staging, placed)
                raise
        outcome.action = "installed"
        outcome.notes = [*repaired, *outcome.notes]
        return outcome

    @staticmethod
    def _default_id(kind: str, identity: Identity, prepared: PreparedPlugin) -> str:
        if kind == "pypi":
            if len(identity.entry_points) != 1:
                raise InvalidParams(
                    "a pypi plugin must declare exactly one [project.entry-points.paseo] entry "
                    f"point; {identity.name} declares {list(identity.entry_points) or 'none'}"
                )
            return validate_plugin_id(identity.entry_points[0])
        if identity.name:
            return default_plugin_id(identity.name)
        if prepared.remote:
            return default_plugin_id(prepared.remote)
        return default_plugin_id(prepared.path.name)

    # ------------------------------------------------------------------ update

    def _kind_of(
        self, plugin_id: str, entry: Mapping[str, Any], record: SourceRecord | None
    ) -> str:
        if record is not None:
            return record.kind
        if entry.get("source") == "directory" and entry.get("path"):
            return "directory"
        raise NotFound(f"plugin {plugin_id!r} is not installed by `paseo plugins install`")

    async def update(self, plugin_id: str, *, ref: str | None = None) -> Outcome:
        """Fetch the plugin again (at ``ref`` for git) and activate it if it changed."""
        async with self._lock.hold():
            repaired = await self._cleanup()
            outcome = await self._update_locked(plugin_id, ref=ref)
        outcome.notes = [*repaired, *outcome.notes]
        return outcome

    async def update_all(self) -> list[Outcome]:
        """Update every managed plugin; ``pypi`` plugins are re-installed against the running
        Paseo version even when their version did not change."""
        async with self._lock.hold():
            repaired = await self._cleanup()
            sources = await asyncio.to_thread(read_sources, self.layout.sources)
            outcomes = [await self._update_locked(pid) for pid in sorted(sources)]
        if outcomes:
            outcomes[0].notes = [*repaired, *outcomes[0].notes]
        return outcomes

    async def _update_locked(self, plugin_id: str, *, ref: str | None = None) -> Outcome:
        entries = await asyncio.to_thread(read_entries, self.home.config)
        sources = await asyncio.to_thread(read_sources, self.layout.sources)
        entry = entries.get(plugin_id) or {}
        record = sources.get(plugin_id)
        kind = self._kind_of(plugin_id, entry, record)
        if kind == "directory":
            if ref is not None:
                raise InvalidParams("--ref applies to git plugins only")
            return Outcome(
                id=plugin_id,
                kind=kind,
                action="unchanged",
                path=str(entry.get("path")),
                enabled=entry.get("enabled") is not False,
                notes=["directory plugins are used in place; nothing to fetch"],
            )
        active = active_path(entry)
        if active is None or not active.is_dir():
            raise NotFound(f"plugin {plugin_id!r} has no active version; reinstall it")
        marker = await asyncio.to_thread(read_marker, active)
        spec = self._update_spec(plugin_id, kind, record, marker, ref)
        source = self._source_for(spec)
        current = await asyncio.to_thread(identify, kind, active)
        prepared, staging = await self._transaction.prepare(source, spec)
        placed: Path | None = None
        try:
            identity = await asyncio.to_thread(identify, kind, prepared.path)
            _check_same_package(plugin_id, kind, current, identity)
            previous_revision = marker.revision if marker else current.version
            if kind != "pypi" and prepared.revision == previous_revision:
                await asyncio.to_thread(shutil.rmtree, staging, True)
                if marker is not None and kind == "git" and ref is not None:
                    new_ref = None if ref == "HEAD" else ref
                    await asyncio.to_thread(
                        write_marker, active, marker.model_copy(update={"ref": new_ref})
                    )
                return Outcome(
                    id=plugin_id,
                    kind=kind,
                    action="unchanged",
                    path=str(active),
                    revision=prepared.revision,
                    previous_revision=previous_revision,
                    enabled=entry.get("enabled") is not False,
                )
            placed = await self._transaction.place(plugin_id, staging)
            effective = await self._transaction.effective_manifest(
                kind, identity, None, previous=active
            )
            await self._transaction.write_artifacts(
                kind=kind,
                plugin_id=plugin_id,
                path=placed,
                spec=spec,
                prepared=prepared,
                identity=identity,
                manifest=effective,
            )
            outcome = await self._transaction.verify_and_commit(
                plugin_id,
                kind,
                placed,
                identity=await asyncio.to_thread(identify, kind, placed),
                prepared=prepared,
                entry=entry,
                enabled=None,
                previous=active,
            )
        except BaseException:
            await asyncio.to_thread(self._transaction.drop_new, staging, placed)
            raise
        outcome.action = "updated"
        outcome.previous_revision = previous_revision
        return outcome

    @staticmethod
    def _update_spec(
        plugin_id: str,
        kind: str,
        record: SourceRecord | None,
        marker: Any,
        ref: str | None,
    ) -> str:
        if ref is not None and kind != "git":
            raise InvalidParams("--ref applies to git plugins only")
        if isinstance(record, GitPluginSource):
            wanted = ref if ref is not None else (marker.ref if marker else None)
            wanted = None if wanted == "HEAD" else wanted
            return f"git+{record.remote}" + (f"@{wanted}" if wanted else "")
        if isinstance(record, PypiPluginSource):
            remote = record.remote
            if remote.endswith(".whl") and os.path.isabs(remote) and not Path(remote).exists():
                raise Unavailable(f"{plugin_id} was installed from {remote}, which is gone")
            return f"pypi:{remote}"
        if marker is None:
            raise NotFound(f"{plugin_id}: the active version has no install marker; reinstall")
        return str(marker.spec)

    # ------------------------------------------------------------------ remove

    async def remove(self, plugin_id: str) -> Outcome:
        """Deactivate and delete a plugin. A directory source's directory is left alone."""
        async with self._lock.hold():
            notes = await self._cleanup()
            entries = await asyncio.to_thread(read_entries, self.home.config)
            sources = await asyncio.to_thread(read_sources, self.layout.sources)
            entry = entries.get(plugin_id) or {}
            record = sources.get(plugin_id)
            if record is None and plugin_id in builtin_names():
                raise InvalidParams(
                    f"{plugin_id!r} is built in and cannot be removed; "
                    f"`paseo plugins disable {plugin_id}` turns it off"
                )
            kind = self._kind_of(plugin_id, entry, record)
            active = active_path(entry)
            if kind == "pypi" and active is not None:
                identity = await asyncio.to_thread(identify, "pypi", active)
                assert identity.name is not None
                await uninstall(
                    self.python, identity.name, self.layout.root, inherit=self._lock.held
                )
            await asyncio.to_thread(update_entry, self.home.config, plugin_id, lambda _: None)
            if record is not None:
                await asyncio.to_thread(delete_source, self.layout.sources, plugin_id)
            if kind != "directory":
                await asyncio.to_thread(discard, self.layout, self.layout.plugin_dir(plugin_id))
        if kind == "directory":
            notes.append(f"{entry.get('path')} was used in place and is left as it is")
        return Outcome(
            id=plugin_id,
            kind=kind,
            action="removed",
            path=str(entry.get("path")) if entry.get("path") else None,
            notes=notes,
        )

    # ------------------------------------------------------------------ enable

    async def set_enabled(self, plugin_id: str, enabled: bool) -> Outcome:
        """Set ``plugins.<id>.enabled`` (works for built-ins and pip-installed plugins too)."""
        from paseo_hookspecs import HOOK_GROUP

        from paseo.plugins.discovery import entry_point_candidates

        async with self._lock.hold():
            entries = await asyncio.to_thread(read_entries, self.home.config)
            known = plugin_id in entries or any(
                c.name == plugin_id for c in entry_point_candidates(HOOK_GROUP)
            )
            if not known:
                raise NotFound(f"no plugin named {plugin_id!r}")

            def change(current: dict[str, Any]) -> dict[str, Any]:
                return {**current, "enabled": enabled}

            await asyncio.to_thread(update_entry, self.home.config, plugin_id, change)
            sources = await asyncio.to_thread(read_sources, self.layout.sources)
        record = sources.get(plugin_id)
        entry = entries.get(plugin_id) or {}
        kind = record.kind if record else ("directory" if entry.get("path") else "entrypoint")
        return Outcome(
            id=plugin_id,
            kind=kind,
            action="enabled" if enabled else "disabled",
            path=entry.get("path"),
            enabled=enabled,
        )

    # ------------------------------------------------------------------ info

    async def info(self, plugin_id: str) -> dict[str, Any]:
        """What is known about a managed or directory plugin, from config.json, sources.json
        and the retained artifacts (no plugin code is imported)."""
        return await asyncio.to_thread(self._info, plugin_id)

    def _info(self, plugin_id: str) -> dict[str, Any]:
        entry = read_entries(self.home.config).get(plugin_id) or {}
        record = read_sources(self.layout.sources).get(plugin_id)
        kind = self._kind_of(plugin_id, entry, record)
        active = active_path(entry)
        marker = read_marker(active) if active is not None else None
        identity: Identity | None = None
        error = None
        if active is not None and active.is_dir():
            try:
                identity = identify(kind, active)
            except InvalidParams as exc:
                error = exc.message
        manifest = None
        if identity is not None and kind != "pypi":
            try:
                manifest = pyproject_manifest(active) if active is not None else None
            except InvalidParams as exc:
                error = exc.message
            manifest = manifest or identity.manifest
        return {
            "id": plugin_id,
            "kind": kind,
            "enabled": entry.get("enabled") is not False,
            "path": str(active) if active is not None else None,
            "managed": self.layout.owner(active) == plugin_id if active is not None else False,
            "remote": getattr(record, "remote", None),
            "ref": marker.ref if marker else None,
            "revision": marker.revision if marker else (identity.version if identity else None),
            "package": identity.name if identity else None,
            "version": identity.version if identity else None,
            "installedAt": marker.installedAt if marker else None,
            "providers": manifest.to_json()["providers"] if manifest else [],
            "error": error,
        }
