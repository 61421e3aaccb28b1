"""The checks of a config document that need the installed plugins and drivers.

The schema (:mod:`paseo.config.models`) cannot know which store drivers are installed, which
plugins register a settings section, or which providers exist. Daemon start-up checks those
once its plugins are loaded, and every path that writes or accepts ``config.json`` (``config
set``, ``config.patch``, ``reload``, ``daemon restart``, ``config validate``) runs the same
:func:`startup_problems`, so what they accept is what the next start accepts.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from paseo_hookspecs import STORE_GROUP
from pydantic import ValidationError

from paseo.config.jsonpath import format_path
from paseo.config.models import PaseoConfig
from paseo.config.problems import ConfigProblem
from paseo.config.providers import provider_problems
from paseo.config.resolved import ResolvedConfig
from paseo.plugins import LoadPolicy, PaseoPluginManager, PluginLoadError
from paseo.plugins.drivers import driver_names


def startup_problems(
    config: PaseoConfig,
    resolved: ResolvedConfig,
    env: Mapping[str, str],
    *,
    manager: PaseoPluginManager | None = None,
) -> list[ConfigProblem]:
    """What would stop (errors) or worry (warnings) a daemon started with ``config``.

    ``manager`` is the daemon's own, already loaded; without one the plugins are loaded as
    start-up would load them for this document and ``env``.
    """
    problems: list[ConfigProblem] = []
    driver = resolved.storage.driver
    installed = driver_names(STORE_GROUP)
    if driver not in installed:
        problems.append(
            ConfigProblem(
                "storage.driver",
                f"no store driver named {driver!r} is installed "
                f"(installed: {', '.join(sorted(installed)) or 'none'})",
            )
        )
    entries = {
        plugin_id: entry.model_dump(mode="json", exclude_unset=True)
        for plugin_id, entry in resolved.plugins.items()
    }
    if manager is None:
        manager = PaseoPluginManager(
            LoadPolicy.from_environment(
                plugins_enabled=resolved.pluginsEnabled, entries=entries, env=env
            )
        )
        try:
            with _unlogged():
                manager.load_all()
        except PluginLoadError as error:
            return [*problems, ConfigProblem("plugins", str(error))]
        # Start-up logs these and carries on without the plugin: a warning here. One whose
        # extra is not installed is not a problem of this document (the listing says so).
        problems.extend(
            ConfigProblem(f"plugins.{record.name}", f"cannot load: {record.error}", "warning")
            for record in manager.records
            if record.error is not None and record.unavailable is None
        )
    problems.extend(section_problems(manager, entries))
    providers = (config.agents.providers if config.agents is not None else None) or {}
    if providers:
        problems.extend(
            provider_problems(providers, manager.providers(), manager.declared_providers())
        )
    default = config.agents.defaultProvider if config.agents is not None else None
    known = {*manager.providers(), *manager.declared_providers(), *providers}
    if default is not None and default not in known:
        problems.append(
            ConfigProblem(
                "agents.defaultProvider",
                f"no provider {default!r} is installed or defined "
                f"(providers: {', '.join(sorted(known)) or 'none'})",
                "warning",
            )
        )
    problems.extend(_named_provider_problems(config, known))
    return problems


def _named_provider_problems(config: PaseoConfig, known: set[str]) -> list[ConfigProblem]:
    """Agent profiles and metadata models naming a provider nobody installed or defined: the
    profile would fail every launch, the model every generation."""
    named: list[tuple[str, str]] = []
    profiles = (config.daemon.agentProfiles if config.daemon is not None else None) or []
    named += [(f"daemon.agentProfiles[{i}].provider", p.provider) for i, p in enumerate(profiles)]
    metadata = config.agents.metadataGeneration if config.agents is not None else None
    models = (metadata.providers if metadata is not None else None) or []
    named += [
        (f"agents.metadataGeneration.providers[{i}].provider", m.provider)
        for i, m in enumerate(models)
    ]
    installed = ", ".join(sorted(known)) or "none"
    return [
        ConfigProblem(
            path,
            f"no provider {provider!r} is installed or defined (providers: {installed})",
            "warning",
        )
        for path, provider in named
        if provider not in known
    ]


def section_problems(
    manager: PaseoPluginManager, entries: Mapping[str, Mapping[str, Any]]
) -> list[ConfigProblem]:
    """Errors in ``plugins.<id>.settings`` against each loaded plugin's registered section."""
    problems: list[ConfigProblem] = []
    for plugin_id, section in sorted(manager.config_sections().items()):
        settings = entries.get(plugin_id, {}).get("settings")
        if settings is None:
            continue
        try:
            section.model.model_validate(settings)
        except ValidationError as error:
            for detail in error.errors():
                where = format_path(("plugins", plugin_id, "settings", *detail["loc"]))
                message = (
                    "unknown key"
                    if detail["type"] == "extra_forbidden"
                    else detail["msg"].removeprefix("Value error, ")
                )
                problems.append(ConfigProblem(where, message))
    return problems


@contextlib.contextmanager
def _unlogged() -> Iterator[None]:
    """Keep this thread's plugin-load messages out of the log: a trial load is not the daemon's
    own, and its failures are returned as problems instead."""
    logger = logging.getLogger("paseo.plugins")
    thread = threading.get_ident()

    def other_threads(record: logging.LogRecord) -> bool:
        return record.thread != thread

    logger.addFilter(other_threads)
    try:
        yield
    finally:
        logger.removeFilter(other_threads)
