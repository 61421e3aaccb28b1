"""Shared helpers for CLI commands: the home, the config and the plugin manager."""

from __future__ import annotations

import argparse
from functools import cache
from typing import TYPE_CHECKING, Any

from paseo.home import HomeLayout, resolve_home

if TYPE_CHECKING:
    from paseo.plugins import PaseoPluginManager


def home_layout(args: argparse.Namespace | None = None) -> HomeLayout:
    """The state root named by ``--home`` / ``$PASEO_HOME`` (never created here)."""
    return HomeLayout(resolve_home(getattr(args, "home", None) if args else None))


def _plugin_settings(layout: HomeLayout) -> tuple[bool, dict[str, Any]]:
    """``pluginsEnabled`` and the ``plugins`` entries of config.json (defaults when absent)."""
    from paseo.cli.errors import CliError
    from paseo.config import ConfigError, load_config

    try:
        loaded = load_config(layout.config)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc
    return loaded.plugins_enabled, loaded.plugin_entries


@cache
def plugin_manager(home: str | None = None) -> PaseoPluginManager:
    """A plugin manager with every allowed plugin loaded (once per process)."""
    from paseo.cli.errors import CliError
    from paseo.plugins import LoadPolicy, PaseoPluginManager, PluginLoadError

    layout = HomeLayout(resolve_home(home))
    enabled, entries = _plugin_settings(layout)
    manager = PaseoPluginManager(
        LoadPolicy.from_environment(plugins_enabled=enabled, entries=entries)
    )
    try:
        manager.load_all()
    except PluginLoadError as exc:
        raise CliError(str(exc)) from exc
    return manager
