"""The plugin manager: loads plugins in isolation and exposes one typed method per hook.

Loading order: built-in entry points, third-party entry points, then directory plugins from
``config.json``. Each plugin is imported, registered and validated on its own; an import error,
an exception or ``SystemExit`` while loading, or a hookimpl that does not match a hookspec is
caught, logged and recorded on that plugin's :class:`PluginRecord` — unless strict mode is on.

Hooks are called one implementation at a time (not through pluggy's fan-out) so a failure in
one plugin is isolated: it is logged and recorded, and the remaining implementations still run.

A loaded directory plugin may also declare ACP providers in its manifest
(:mod:`paseo.plugins.manifests`); they are collected while loading and offered by
:meth:`PaseoPluginManager.declared_providers`. A declared id that a hook-registered provider
already has is refused with a load error on the declaring plugin.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
from paseo_hookspecs import HOOK_GROUP, PROJECT_NAME, specs
from paseo_hookspecs.connectors import ClientConnector
from paseo_hookspecs.doctor import DoctorCheck
from paseo_hookspecs.mcp_tools import McpTool
from paseo_hookspecs.registration import (
    CliCommandGroup,
    ConfigSection,
    LazyRpcMethodGroup,
    RpcMethodGroup,
)
from paseo_hookspecs.schedules import ScheduleRunEnded, ScheduleTargetKind
from paseo_hookspecs.status import StatusSection

from paseo.plugins.discovery import (
    Candidate,
    DirectoryPluginError,
    EntryPointScan,
    directory_candidates,
    import_root,
)
from paseo.plugins.extras import MissingExtra, missing_extra
from paseo.plugins.manifests import DeclaredProvider, ManifestError, declared_providers
from paseo.plugins.policy import LoadPolicy
from paseo.plugins.records import PluginLoadError, PluginRecord

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext
    from paseo_hookspecs.events import AgentEvent
    from paseo_hookspecs.interfaces.agent import AgentProvider
    from paseo_hookspecs.interfaces.source import PluginSource
    from paseo_hookspecs.interfaces.transport import Transport

log = logging.getLogger("paseo.plugins")

HOOK_NAMES = tuple(name for name in dir(specs) if name.startswith("paseo_"))


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _load_target(target: str) -> object:
    module_name, _, attribute = target.partition(":")
    obj: object = importlib.import_module(module_name.strip())
    for part in filter(None, attribute.strip().split(".")):
        obj = getattr(obj, part)
    return obj


class PaseoPluginManager:
    """Wraps ``pluggy.PluginManager("paseo")``."""

    def __init__(self, policy: LoadPolicy | None = None) -> None:
        self.policy = policy or LoadPolicy()
        self._pm = pluggy.PluginManager(PROJECT_NAME)
        self._pm.add_hookspecs(specs)
        self.records: list[PluginRecord] = []
        self._record_by_plugin: dict[int, PluginRecord] = {}
        self._started: DaemonContext | None = None
        self._declared: dict[str, DeclaredProvider] = {}
        self._declaring: dict[str, PluginRecord] = {}
        """The record of each directory plugin whose manifest was read, keyed by plugin id."""
        self._implementations_of: dict[str, list[tuple[object, Callable[..., Any]]]] = {}
        """Each hook's implementations, cached until a plugin is (un)registered: the event
        taps are called for every timeline entry."""

    # ------------------------------------------------------------------ loading

    def load_all(self) -> None:
        """Discover and load every allowed plugin (entry points, then directory plugins)."""
        # A directory plugin recorded under a built-in's id replaces that built-in (the user
        # asked for it explicitly when installing with --allow-builtin-shadow).
        shadowing = {plugin_id for plugin_id, _ in self.policy.directory_entries()}
        scan = EntryPointScan()
        for candidate in scan.candidates(HOOK_GROUP):
            if candidate.builtin and candidate.name in shadowing:
                continue
            self._load_candidate(candidate)
        for plugin_id, entry in self.policy.directory_entries():
            self._load_directory(plugin_id, Path(str(entry["path"])))
        if self._declared:
            self._refuse_taken_provider_ids()
        from paseo.plugins.drivers import driver_records

        for record in driver_records(scan):
            self.records.append(record)
            if record.unavailable is not None:
                self._unavailable(record, record.unavailable)

    def _load_directory(self, plugin_id: str, path: Path) -> None:
        if not self.policy.allows(plugin_id, builtin=False):
            # A disabled plugin is never read: its directory may be gone, and a daemon must
            # not fail (strict mode) over a plugin the user switched off.
            self.records.append(self._directory_record(plugin_id, path))
            return
        try:
            candidates = directory_candidates(plugin_id, path, HOOK_GROUP)
        except DirectoryPluginError as exc:
            self._directory_failure(plugin_id, path, exc)
            return
        if not candidates:
            self._directory_failure(
                plugin_id,
                path,
                DirectoryPluginError(
                    f"{path / 'pyproject.toml'} declares no [project.entry-points.{HOOK_GROUP}]"
                ),
            )
            return
        first = len(self.records)
        for candidate in candidates:
            self._load_candidate(candidate, policy_name=plugin_id)
        loaded = [r for r in self.records[first:] if r.loaded]
        if loaded:
            # Only a loaded plugin declares providers: a disabled or broken one adds nothing.
            self._declare(loaded[0], plugin_id, path)

    def _declare(self, record: PluginRecord, plugin_id: str, path: Path) -> None:
        """Collect the providers ``plugin_id``'s manifest declares; the first declaration of an
        id wins."""
        self._declaring[plugin_id] = record
        try:
            declared = declared_providers(plugin_id, path)
        except ManifestError as exc:
            self._soft_fail(record, str(exc))
            return
        # Ids a hook-registered provider has are refused once every plugin is loaded
        # (_refuse_taken_provider_ids): a later plugin may register one.
        for provider in declared:
            other = self._declared.get(provider.id)
            if other is not None:
                self._soft_fail(
                    record,
                    f"its manifest declares provider {provider.id!r}, which plugin "
                    f"{other.plugin!r} already declares; ignored",
                )
                continue
            self._declared[provider.id] = provider

    def _refuse_taken_provider_ids(self) -> None:
        """Drop declared providers whose id a hook-registered provider already has: a manifest
        cannot replace a built-in provider (nor another plugin's)."""
        owners: dict[str, str] = {}
        for name, provider in self._collect("paseo_register_providers"):
            owners.setdefault(str(getattr(provider, "id", "")), name)
        builtin = {r.name for r in self.records if r.builtin}
        for provider_id in [p for p in self._declared if p in owners]:
            declared = self._declared.pop(provider_id)
            owner = owners[provider_id]
            what = "a built-in provider" if owner in builtin else f"plugin {owner!r}'s provider"
            self._refuse_taken(self._declaring[declared.plugin], provider_id, what)

    def _refuse_taken(self, record: PluginRecord, provider_id: str, what: str) -> None:
        self._soft_fail(
            record,
            f"its manifest declares provider {provider_id!r}, which is {what}; refused "
            "(give the declared provider another id)",
        )

    def _soft_fail(self, record: PluginRecord, message: str) -> None:
        """A problem with what a loaded plugin declares: recorded and logged (its hooks stay
        registered), a hard error in strict mode."""
        log.error("plugin %s: %s", record.name, message)
        if record.error is None:
            record.error = message
        if self.policy.strict:
            raise PluginLoadError(f"plugin {record.name!r}: {message}")

    def _directory_failure(self, plugin_id: str, path: Path, exc: Exception) -> None:
        record = self._directory_record(plugin_id, path)
        self.records.append(record)
        self._fail(record, exc)

    def _directory_record(self, plugin_id: str, path: Path) -> PluginRecord:
        return PluginRecord(
            name=plugin_id,
            version=None,
            distribution=None,
            builtin=False,
            source="directory",
            enabled=self.policy.allows(plugin_id, builtin=False),
            path=str(path),
        )

    def _load_candidate(self, candidate: Candidate, *, policy_name: str | None = None) -> None:
        record = PluginRecord(
            name=candidate.name,
            version=candidate.version,
            distribution=candidate.distribution,
            builtin=candidate.builtin,
            source=candidate.source,
            enabled=self.policy.allows(policy_name or candidate.name, builtin=candidate.builtin),
            path=str(candidate.path) if candidate.path else None,
        )
        self.records.append(record)
        if not record.enabled:
            return
        unavailable = missing_extra(candidate.distribution, candidate.extras)
        if unavailable is not None:
            self._unavailable(record, unavailable)
            return
        if any(r.loaded and r.name == record.name for r in self.records):
            self._fail(record, PluginLoadError(f"a plugin named {record.name!r} is already loaded"))
            return
        try:
            if candidate.path is not None:
                root = str(import_root(candidate.path))
                if root not in sys.path:
                    sys.path.insert(0, root)
            plugin = _load_target(candidate.target)
            self._register(plugin, record)
        except PluginLoadError:
            raise
        except (Exception, SystemExit) as exc:
            # SystemExit is caught on purpose: a plugin calling sys.exit() at import time must
            # not take the CLI or the daemon down with it.
            self._fail(record, exc)

    def register(self, plugin: object, name: str, *, builtin: bool = False) -> PluginRecord:
        """Register an already-imported plugin object (used by tests and in-process hosts)."""
        record = PluginRecord(
            name=name,
            version=None,
            distribution=None,
            builtin=builtin,
            source="inline",
            enabled=True,
        )
        self.records.append(record)
        self._register(plugin, record)
        return record

    def unregister(self, name: str) -> None:
        """Remove a registered plugin and its record."""
        plugin = self._pm.get_plugin(name)
        if plugin is not None:
            self._pm.unregister(plugin)
            self._implementations_of.clear()
            self._record_by_plugin.pop(id(plugin), None)
        self.records = [r for r in self.records if r.name != name]

    def _register(self, plugin: object, record: PluginRecord) -> None:
        self._implementations_of.clear()
        try:
            self._pm.register(plugin, name=record.name)
        except ValueError as exc:
            # pluggy refuses a second registration of the same object or name.
            self._fail(record, exc)
            return
        except pluggy.PluginValidationError as exc:
            self._fail(record, exc)
            return
        callers = self._pm.get_hookcallers(plugin) or []
        unknown = sorted(c.name for c in callers if c.spec is None)
        if unknown:
            self._pm.unregister(plugin)
            self._fail(
                record,
                PluginLoadError(
                    f"implements unknown hook(s) {', '.join(unknown)}; known hooks: "
                    f"{', '.join(HOOK_NAMES)}"
                ),
            )
            return
        record.hooks = sorted(c.name for c in callers)
        record.loaded = True
        self._record_by_plugin[id(plugin)] = record
        if self._started is not None and "paseo_startup" in record.hooks:
            self._call_one(plugin, "paseo_startup", {"context": self._started})

    def _unavailable(self, record: PluginRecord, unavailable: MissingExtra) -> None:
        """An entry point whose extra is not installed: never imported, listed with the
        install command; not a failure (strict mode accepts it: nothing is broken). Not
        logged here: the daemon's start warns once, and a CLI command's listing shows it (a
        warning would be printed by every command that loads plugins)."""
        record.unavailable = unavailable
        record.error = unavailable.message

    def _fail(self, record: PluginRecord, exc: BaseException) -> None:
        record.error = _describe(exc)
        record.loaded = False
        log.error("plugin %s failed to load: %s", record.name, record.error, exc_info=exc)
        if self.policy.strict:
            raise PluginLoadError(f"plugin {record.name!r} failed to load: {record.error}") from exc

    # ------------------------------------------------------------- calling hooks

    def _implementations(self, hook: str) -> list[tuple[object, Callable[..., Any]]]:
        cached = self._implementations_of.get(hook)
        if cached is None:
            caller = getattr(self._pm.hook, hook)
            # Registration order: built-ins first, then third-party, then directory plugins,
            # so a built-in wins a duplicate id. (pluggy's own fan-out would call them in
            # reverse.)
            cached = [(impl.plugin, impl.function) for impl in caller.get_hookimpls()]
            self._implementations_of[hook] = cached
        return cached

    def _call_one(self, plugin: object, hook: str, kwargs: Mapping[str, Any]) -> None:
        impl = next((f for p, f in self._implementations(hook) if p is plugin), None)
        if impl is not None:
            self._invoke(plugin, hook, impl, kwargs)

    def _invoke(
        self, plugin: object, hook: str, function: Callable[..., Any], kwargs: Mapping[str, Any]
    ) -> None:
        try:
            function(**kwargs)
        except Exception as exc:
            record = self._record_by_plugin.get(id(plugin))
            name = record.name if record else repr(plugin)
            log.exception("plugin %s failed in %s", name, hook)
            if self.policy.strict:
                raise PluginLoadError(
                    f"plugin {name!r} failed in {hook}: {_describe(exc)}"
                ) from exc
            if record is not None and record.error is None:
                record.error = f"{hook}: {_describe(exc)}"

    def _each(self, hook: str, **kwargs: Any) -> None:
        for plugin, function in self._implementations(hook):
            self._invoke(plugin, hook, function, kwargs)

    def _collect(self, hook: str) -> list[tuple[str, Any]]:
        """Call a ``paseo_register_*`` hook; return ``(plugin name, object)`` pairs."""
        collected: list[tuple[str, Any]] = []
        for plugin, function in self._implementations(hook):
            record = self._record_by_plugin.get(id(plugin))
            name = record.name if record else repr(plugin)

            def register(obj: Any, _name: str = name) -> None:
                collected.append((_name, obj))

            self._invoke(plugin, hook, function, {"register": register})
        return collected

    def plugin_name(self, plugin: object) -> str | None:
        record = self._record_by_plugin.get(id(plugin))
        return record.name if record else None

    # ------------------------------------------------------- one method per hook

    def providers(self) -> dict[str, AgentProvider]:
        """``paseo_register_providers``: providers keyed by id (first registration wins)."""
        return self._unique("paseo_register_providers", lambda p: str(p.id))

    def declared_providers(self) -> dict[str, DeclaredProvider]:
        """Providers declared by the manifests of loaded directory plugins, keyed by id (ids a
        hook-registered provider has are refused at load time)."""
        return dict(self._declared)

    def transports(self) -> dict[str, Transport]:
        """``paseo_register_transports``: transports keyed by name."""
        return self._unique("paseo_register_transports", lambda t: str(t.name))

    def client_connectors(self) -> list[ClientConnector]:
        """``paseo_register_client_connectors``: connectors in registration order (a duplicate
        name is ignored, logged)."""
        found = self._unique("paseo_register_client_connectors", lambda c: str(c.name))
        return [c for c in found.values() if isinstance(c, ClientConnector)]

    def plugin_sources(self) -> dict[str, PluginSource]:
        """``paseo_register_plugin_sources``: managed plugin sources keyed by kind."""
        return self._unique("paseo_register_plugin_sources", lambda s: str(s.kind))

    def cli_command_groups(self) -> list[CliCommandGroup]:
        """``paseo_register_cli_commands``: command groups in registration order."""
        return [
            g
            for _, g in self._collect("paseo_register_cli_commands")
            if isinstance(g, CliCommandGroup)
        ]

    def doctor_checks(self) -> list[tuple[str, DoctorCheck]]:
        """``paseo_register_doctor_checks``: ``(plugin name, check)`` in registration order."""
        return [
            (name, check)
            for name, check in self._collect("paseo_register_doctor_checks")
            if isinstance(check, DoctorCheck)
        ]

    def status_sections(self) -> list[tuple[str, StatusSection]]:
        """``paseo_register_status_sections``: ``(plugin name, section)``; a repeated section
        name keeps the first."""
        seen: set[str] = set()
        sections: list[tuple[str, StatusSection]] = []
        for name, section in self._collect("paseo_register_status_sections"):
            if isinstance(section, StatusSection) and section.name not in seen:
                seen.add(section.name)
                sections.append((name, section))
        return sections

    def mcp_tools(self) -> list[McpTool]:
        """``paseo_register_mcp_tools``: tools in registration order (a name registered
        twice keeps the first; the later one is logged and ignored)."""
        return [
            tool
            for tool in self._unique("paseo_register_mcp_tools", lambda t: str(t.name)).values()
            if isinstance(tool, McpTool)
        ]

    def schedule_targets(self) -> dict[str, ScheduleTargetKind]:
        """``paseo_register_schedule_targets``: kinds keyed by ``type`` (first wins; the
        kernel's own ``agent`` and ``new-agent`` are never a plugin's)."""
        kinds = self._unique("paseo_register_schedule_targets", lambda k: str(k.type))
        return {
            kind: target
            for kind, target in kinds.items()
            if isinstance(target, ScheduleTargetKind) and kind not in ("agent", "new-agent")
        }

    def rpc_method_groups(self) -> list[tuple[str, RpcMethodGroup | LazyRpcMethodGroup]]:
        """``paseo_register_rpc_methods``: ``(plugin name, group)`` pairs (a lazy group is
        loaded on its first call)."""
        return [
            (n, g)
            for n, g in self._collect("paseo_register_rpc_methods")
            if isinstance(g, RpcMethodGroup | LazyRpcMethodGroup)
        ]

    def config_sections(self) -> dict[str, ConfigSection]:
        """``paseo_register_config_sections``: each plugin's section keyed by plugin name."""
        return {
            n: s
            for n, s in self._collect("paseo_register_config_sections")
            if isinstance(s, ConfigSection)
        }

    def startup(self, context: DaemonContext) -> None:
        """``paseo_startup`` (historic): plugins registered later are called on registration."""
        self._started = context
        self._each("paseo_startup", context=context)

    def shutdown(self, context: DaemonContext) -> None:
        """``paseo_shutdown``."""
        self._each("paseo_shutdown", context=context)
        self._started = None

    def agent_event(self, agent_id: str, provider: str, event: AgentEvent) -> None:
        """``paseo_agent_event`` tap; a failing implementation never stops the others."""
        self._each("paseo_agent_event", agent_id=agent_id, provider=provider, event=event)

    def attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        """``paseo_attention`` tap."""
        self._each("paseo_attention", agent_id=agent_id, reason=reason, timestamp=timestamp)

    def schedule_run_ended(self, run: ScheduleRunEnded) -> None:
        """``paseo_schedule_run_ended`` tap; a failing implementation never stops the others."""
        self._each("paseo_schedule_run_ended", run=run)

    # ------------------------------------------------------------------ helpers

    def _unique(self, hook: str, key: Callable[[Any], str]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for name, obj in self._collect(hook):
            ident = key(obj)
            if ident in result:
                log.error("plugin %s registers duplicate %s %r; ignored", name, hook, ident)
                continue
            result[ident] = obj
        return result

    def loaded(self) -> Iterable[PluginRecord]:
        return (r for r in self.records if r.loaded)


def hookspec_names() -> tuple[str, ...]:
    """Every hook the contract defines."""
    return HOOK_NAMES


__all__ = ["PaseoPluginManager", "hookspec_names"]
