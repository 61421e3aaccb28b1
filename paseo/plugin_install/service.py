"""Install, update and remove managed plugins: prepare, verify, then swap.

Every change follows the same steps, each of which may fail or be killed without harming the
active version:

1. **Clean up** what an earlier crash left: staging and trash directories, versions config.json
   does not name, ``sources.json`` records without a config entry, a ``pypi`` environment that
   does not hold the active wheel.
2. **Prepare** the new version in a fresh directory through the source's ``prepare`` (no plugin
   code runs), then move it to ``plugins/{pluginId}/{uuid}/``.
3. **Verify** it in a child process (see :mod:`paseo.plugin_install.verify`).
4. **Swap**: write ``sources.json``, then point ``plugins.<id>`` of config.json at the new
   directory (one atomic write: the commit point), then delete the previous version.

A failure before the commit point removes the new directory and leaves the previous version
active and untouched. A ``pypi`` plugin is the exception that must touch shared state before
the commit: its wheel is installed into the environment to be verified, and on failure the
previous wheel (kept in its own ``{uuid}`` directory) is reinstalled, or the distribution is
removed if there was none.

One operation runs at a time per state root (``plugins/.lock``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, Unavailable
from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

from paseo.fs.atomic import is_temp_file
from paseo.home import HomeLayout
from paseo.plugin_install import pypi_env
from paseo.plugin_install.ids import (
    PLUGIN_ID,
    builtin_names,
    check_not_builtin,
    default_plugin_id,
    validate_plugin_id,
)
from paseo.plugin_install.layout import (
    Identity,
    ManagedLayout,
    identify,
    new_marker,
    read_marker,
    write_declarative_plugin,
    write_marker,
)
from paseo.plugin_install.manifest import PluginManifest
from paseo.plugin_install.sources_file import (
    GitPluginSource,
    NpmPluginSource,
    PypiPluginSource,
    SourceRecord,
    delete_source,
    put_source,
    read_sources,
)
from paseo.plugin_install.spec import canonical_spec
from paseo.plugin_install.verify import DEFAULT_TIMEOUT, verify

_VERSION_NAME = re.compile(r"^[0-9a-f]{32}$")
"""Version directories are named by a uuid4 in hex."""

LOCK_TIMEOUT = 60.0
"""Seconds to wait for another install operation on the same state root."""


@dataclass
class Outcome:
    """What one install, update or remove did (the command's JSON output)."""

    id: str
    kind: str
    action: str
    """``installed``, ``updated``, ``unchanged``, ``removed``, ``enabled`` or ``disabled``."""
    path: str | None = None
    revision: str | None = None
    previous_revision: str | None = None
    enabled: bool | None = None
    hooks: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    manifest: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "action": self.action,
            "path": self.path,
            "revision": self.revision,
            "previousRevision": self.previous_revision,
            "enabled": self.enabled,
            "hooks": self.hooks,
            "providers": self.providers,
            "manifest": self.manifest,
            "notes": self.notes,
        }


def _entries(config: Path) -> dict[str, dict[str, Any]]:
    """config.json's ``plugins`` entries, raw (the loader validates them, not us)."""
    from paseo.config.raw import read_document

    document, _ = read_document(config)
    plugins = document.get("plugins")
    if not isinstance(plugins, dict):
        return {}
    return {k: v for k, v in plugins.items() if isinstance(v, dict)}


def _update_entry(
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


def _discard(layout: ManagedLayout, path: Path) -> None:
    """Delete a directory by first renaming it into the trash, so no half-deleted tree is ever
    left at a path config.json could name."""
    if not path.exists():
        return
    layout.trash.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = layout.trash / uuid.uuid4().hex
    os.rename(path, target)
    shutil.rmtree(target, ignore_errors=True)


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
        self.verify_timeout = verify_timeout
        self._held: tuple[int, ...] = ()
        """The lock's descriptor while an operation runs; helper processes inherit it."""

    # ------------------------------------------------------------------ locking

    def _acquire(self) -> int:
        self.layout.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.layout.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise Conflict("another plugin install, update or remove is running") from None
                time.sleep(0.05)

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        fd = await asyncio.to_thread(self._acquire)
        self._held = (fd,)
        try:
            yield
        finally:
            self._held = ()
            await asyncio.to_thread(self._tidy)
            os.close(fd)

    def _tidy(self) -> None:
        """Drop the private working directories when they are empty."""
        for directory in (self.layout.staging, self.layout.trash):
            with contextlib.suppress(OSError):
                directory.rmdir()

    # ------------------------------------------------------------------ cleanup

    async def _cleanup(self) -> list[str]:
        """Remove what an interrupted operation left (the caller holds the lock); return notes
        saying what was repaired."""
        removed: list[str] = await asyncio.to_thread(self._cleanup_files)
        notes = await self._reconcile_pypi()
        if removed:
            notes.append(f"removed {len(removed)} leftover(s) of an interrupted operation")
        return notes

    def _cleanup_files(self) -> list[str]:
        root = self.layout.root
        if not root.is_dir():
            return []
        entries = _entries(self.home.config)
        removed: list[str] = []
        for leftover in (self.layout.staging, self.layout.trash):
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
            active = self._active_path(entries.get(child.name, {}))
            for version in sorted(child.iterdir()):
                # Only names this installer creates are touched: a user may keep a plugin
                # directory of their own under plugins/ and point config.json at it.
                if not _VERSION_NAME.match(version.name):
                    continue
                if active is not None and version.resolve() == active:
                    continue
                if version.is_dir() and not version.is_symlink():
                    _discard(self.layout, version)
                else:
                    version.unlink()
                removed.append(str(version))
            if active is None:
                with contextlib.suppress(OSError):
                    child.rmdir()
        # A record without a config entry is an install that never committed (or a remove
        # that did): config.json decides.
        sources = read_sources(self.layout.sources)
        for plugin_id, record in sources.items():
            if plugin_id not in entries and not isinstance(record, PypiPluginSource):
                delete_source(self.layout.sources, plugin_id)
        return removed

    def _active_path(self, entry: Mapping[str, Any]) -> Path | None:
        path = entry.get("path")
        if not isinstance(path, str) or not path:
            return None
        return Path(path).resolve()

    async def _reconcile_pypi(self) -> list[str]:
        notes: list[str] = []
        entries = await asyncio.to_thread(_entries, self.home.config)
        sources = await asyncio.to_thread(read_sources, self.layout.sources)
        for plugin_id, record in sources.items():
            if not isinstance(record, PypiPluginSource):
                continue
            entry = entries.get(plugin_id)
            active = self._active_path(entry) if entry else None
            if active is None:
                # Interrupted first install or remove: the environment must not keep an
                # unverified (or unwanted) distribution.
                distribution = pypi_env.distribution_of(record.remote)
                if distribution is not None:
                    await pypi_env.uninstall(
                        self.python, distribution, self.layout.root, inherit=self._held
                    )
                await asyncio.to_thread(delete_source, self.layout.sources, plugin_id)
                notes.append(f"{plugin_id}: undid an interrupted pypi install or remove")
                continue
            try:
                identity = await asyncio.to_thread(identify, "pypi", active)
            except InvalidParams as exc:
                notes.append(f"{plugin_id}: cannot check the installed version: {exc.message}")
                continue
            assert identity.name is not None
            assert identity.wheel is not None
            installed = await asyncio.to_thread(pypi_env.installed_version, identity.name)
            if installed != identity.version:
                # An update died between pip and the config.json commit: put back the wheel
                # config.json still names.
                await pypi_env.install_wheel(
                    self.python, identity.wheel, restore=True, inherit=self._held
                )
                notes.append(f"{plugin_id}: reinstalled the active version {identity.version}")
        return notes

    # ------------------------------------------------------------------ helpers

    def _source_for(self, spec: str) -> PluginSource:
        for source in self.sources.values():
            if source.matches(spec):
                return source
        kinds = ", ".join(sorted(self.sources)) or "none registered"
        raise NotFound(f"no plugin source understands {spec!r} (sources: {kinds})")

    async def _prepare(self, source: PluginSource, spec: str) -> tuple[PreparedPlugin, Path]:
        staging = await asyncio.to_thread(self.layout.new_staging_dir)
        try:
            prepared = await source.prepare(spec, staging)
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, staging, True)
            raise
        return prepared, staging

    async def _place(self, plugin_id: str, staging: Path) -> Path:
        """Move a prepared version from staging to ``plugins/{id}/{uuid}``."""

        def move() -> Path:
            parent = self.layout.plugin_dir(plugin_id)
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            target = parent / staging.name
            os.rename(staging, target)
            return target

        return await asyncio.to_thread(move)

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
            inherit=self._held,
        )

    def _check_new_id(self, plugin_id: str, entries: Mapping[str, Any], allow_shadow: bool) -> None:
        validate_plugin_id(plugin_id)
        entry = entries.get(plugin_id) or {}
        if entry.get("path") or plugin_id in read_sources(self.layout.sources):
            raise Conflict(
                f"plugin {plugin_id!r} is already installed; use `paseo plugins update "
                f"{plugin_id}` or `paseo plugins remove {plugin_id}` first"
            )
        check_not_builtin(plugin_id, allow_shadow=allow_shadow)

    @staticmethod
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
        async with self._locked():
            repaired = await self._cleanup()
            entries = await asyncio.to_thread(_entries, self.home.config)
            if plugin_id is not None:
                self._check_new_id(plugin_id, entries, allow_builtin_shadow)
            prepared, staging = await self._prepare(source, canonical)
            in_place = prepared.path.resolve() != staging.resolve()
            placed: Path | None = None
            try:
                identity = await asyncio.to_thread(identify, source.kind, prepared.path)
                pid = plugin_id or self._default_id(source.kind, identity, prepared)
                if plugin_id is None:
                    self._check_new_id(pid, entries, allow_builtin_shadow)
                if source.kind == "pypi":
                    _check_pypi_id(pid)
                effective = await self._effective_manifest(
                    source.kind, identity, manifest, previous=None
                )
                if in_place:
                    await asyncio.to_thread(staging.rmdir)
                    path = prepared.path.resolve()
                else:
                    placed = await self._place(pid, staging)
                    path = placed
                    await self._write_artifacts(
                        kind=source.kind,
                        plugin_id=pid,
                        path=path,
                        spec=canonical,
                        prepared=prepared,
                        identity=identity,
                        manifest=effective,
                    )
                outcome = await self._verify_and_commit(
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
                await asyncio.to_thread(self._drop_new, staging, placed)
                raise
        outcome.action = "installed"
        outcome.notes = [*repaired, *outcome.notes]
        return outcome

    def _drop_new(self, staging: Path, placed: Path | None) -> None:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        if placed is not None:
            _discard(self.layout, placed)
            with contextlib.suppress(OSError):
                placed.parent.rmdir()

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

    async def _effective_manifest(
        self,
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
            from paseo.plugin_install.manifest import pyproject_manifest

            return await asyncio.to_thread(pyproject_manifest, previous)
        raise InvalidParams(
            f'npm package {identity.name} declares no "paseo" manifest; describe its provider '
            "with --provider-id, --provider-label and --bin"
        )

    async def _write_artifacts(
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

    async def _verify_and_commit(
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
        settings = entry.get("settings")
        if kind == "pypi":
            assert prepared.remote is not None
            report = await self._install_verified_wheel(
                plugin_id, identity, settings, previous, prepared.remote
            )
        else:
            report = await self._verify_directory(plugin_id, kind, path, settings)
        record = self._source_record(kind, prepared)
        if record is not None:
            await asyncio.to_thread(put_source, self.layout.sources, plugin_id, record)
        await asyncio.to_thread(
            _update_entry,
            self.home.config,
            plugin_id,
            lambda current: self._entry_with(
                current, path=path, directory=kind != "pypi", enabled=enabled
            ),
        )
        if previous is not None and previous != path:
            await asyncio.to_thread(_discard, self.layout, previous)
        final = await asyncio.to_thread(_entries, self.home.config)
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

    @staticmethod
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
        if previous is None:
            # Record the intent first: if we die after pip but before the commit, cleanup sees
            # a pypi record without a config entry and removes the unverified distribution.
            record = PypiPluginSource(kind="pypi", remote=remote)
            sources = await asyncio.to_thread(read_sources, self.layout.sources)
            if plugin_id not in sources:
                await asyncio.to_thread(put_source, self.layout.sources, plugin_id, record)
        try:
            await pypi_env.install_wheel(self.python, identity.wheel, inherit=self._held)
            return await self._verify_entry_points(plugin_id, identity, settings)
        except BaseException:
            if previous is not None:
                old = await asyncio.to_thread(identify, "pypi", previous)
                assert old.wheel is not None
                await pypi_env.install_wheel(
                    self.python, old.wheel, restore=True, inherit=self._held
                )
            else:
                await pypi_env.uninstall(
                    self.python, identity.name, self.layout.root, inherit=self._held
                )
                await asyncio.to_thread(delete_source, self.layout.sources, plugin_id)
            raise

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
        async with self._locked():
            repaired = await self._cleanup()
            outcome = await self._update_locked(plugin_id, ref=ref)
        outcome.notes = [*repaired, *outcome.notes]
        return outcome

    async def update_all(self) -> list[Outcome]:
        """Update every managed plugin; ``pypi`` plugins are re-installed against the running
        Paseo version even when their version did not change."""
        async with self._locked():
            repaired = await self._cleanup()
            sources = await asyncio.to_thread(read_sources, self.layout.sources)
            outcomes = [await self._update_locked(pid) for pid in sorted(sources)]
        if outcomes:
            outcomes[0].notes = [*repaired, *outcomes[0].notes]
        return outcomes

    async def _update_locked(self, plugin_id: str, *, ref: str | None = None) -> Outcome:
        entries = await asyncio.to_thread(_entries, self.home.config)
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
        active = self._active_path(entry)
        if active is None or not active.is_dir():
            raise NotFound(f"plugin {plugin_id!r} has no active version; reinstall it")
        marker = await asyncio.to_thread(read_marker, active)
        spec = self._update_spec(plugin_id, kind, record, marker, ref)
        source = self._source_for(spec)
        current = await asyncio.to_thread(identify, kind, active)
        prepared, staging = await self._prepare(source, spec)
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
            placed = await self._place(plugin_id, staging)
            effective = await self._effective_manifest(kind, identity, None, previous=active)
            await self._write_artifacts(
                kind=kind,
                plugin_id=plugin_id,
                path=placed,
                spec=spec,
                prepared=prepared,
                identity=identity,
                manifest=effective,
            )
            outcome = await self._verify_and_commit(
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
            await asyncio.to_thread(self._drop_new, staging, placed)
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
        async with self._locked():
            notes = await self._cleanup()
            entries = await asyncio.to_thread(_entries, self.home.config)
            sources = await asyncio.to_thread(read_sources, self.layout.sources)
            entry = entries.get(plugin_id) or {}
            record = sources.get(plugin_id)
            if record is None and plugin_id in builtin_names():
                raise InvalidParams(
                    f"{plugin_id!r} is built in and cannot be removed; "
                    f"`paseo plugins disable {plugin_id}` turns it off"
                )
            kind = self._kind_of(plugin_id, entry, record)
            active = self._active_path(entry)
            if kind == "pypi" and active is not None:
                identity = await asyncio.to_thread(identify, "pypi", active)
                assert identity.name is not None
                await pypi_env.uninstall(
                    self.python, identity.name, self.layout.root, inherit=self._held
                )
            await asyncio.to_thread(_update_entry, self.home.config, plugin_id, lambda _: None)
            if record is not None:
                await asyncio.to_thread(delete_source, self.layout.sources, plugin_id)
            if kind != "directory":
                await asyncio.to_thread(_discard, self.layout, self.layout.plugin_dir(plugin_id))
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

        async with self._locked():
            entries = await asyncio.to_thread(_entries, self.home.config)
            known = plugin_id in entries or any(
                c.name == plugin_id for c in entry_point_candidates(HOOK_GROUP)
            )
            if not known:
                raise NotFound(f"no plugin named {plugin_id!r}")

            def change(current: dict[str, Any]) -> dict[str, Any]:
                return {**current, "enabled": enabled}

            await asyncio.to_thread(_update_entry, self.home.config, plugin_id, change)
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
        entry = _entries(self.home.config).get(plugin_id) or {}
        record = read_sources(self.layout.sources).get(plugin_id)
        kind = self._kind_of(plugin_id, entry, record)
        active = self._active_path(entry)
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
            from paseo.plugin_install.manifest import pyproject_manifest

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
