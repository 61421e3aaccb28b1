"""The client's way to daemons it cannot dial itself: plugin connectors
(:mod:`paseo_hookspecs.connectors`, the relay's offer URLs).

A ``--host`` / ``PASEO_HOST`` value that parses as an address never gets past
:func:`connector_for`'s first check, so ordinary use imports no plugin (and, as the light
client's fast path needs, neither asyncio nor pydantic: this module imports only the address
parser until a plugin is needed). A value that does not is offered to the plugins' connectors;
the first that accepts it opens a message channel (:mod:`paseo.client.tunnel`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from paseo.rpc.address import AddressError, parse_address

if TYPE_CHECKING:
    from paseo_hookspecs.connectors import ClientConnector


def host_value(host: str | None, env: Mapping[str, str] | None) -> tuple[str | None, str]:
    """The host string the client is to use and where it came from (``--host`` first)."""
    if host:
        return host, "--host"
    environ = os.environ if env is None else env
    return environ.get("PASEO_HOST") or None, "PASEO_HOST"


def connector_for(
    host: str | None, *, home: Path | str | None = None, env: Mapping[str, str] | None = None
) -> tuple[ClientConnector, str] | None:
    """The plugin connector for the effective host string and that string, or ``None`` when
    it is an address (or there is none, or no connector accepts it: the address parser then
    reports it)."""
    value, _ = host_value(host, env)
    if not value:
        return None
    try:
        parse_address(value)
    except AddressError:
        pass
    else:
        return None
    for connector in _connectors(home, env):
        if connector.accepts(value):
            return connector, value
    return None


def _connectors(home: Path | str | None, env: Mapping[str, str] | None) -> list[ClientConnector]:
    from paseo_hookspecs.errors import Unavailable

    from paseo.config import ConfigError, load_config
    from paseo.home import HomeLayout, resolve_home
    from paseo.plugins import LoadPolicy, PaseoPluginManager, PluginLoadError

    layout = HomeLayout(resolve_home(str(home) if home else None))
    try:
        loaded = load_config(layout.config)
        enabled, entries = loaded.plugins_enabled, loaded.plugin_entries
    except ConfigError:
        # A broken config.json is the daemon's to report; the built-in connectors still load.
        enabled, entries = True, {}
    manager = PaseoPluginManager(
        LoadPolicy.from_environment(plugins_enabled=enabled, entries=entries, env=env)
    )
    try:
        manager.load_all()
    except PluginLoadError as exc:
        raise Unavailable(str(exc)) from None
    return manager.client_connectors()
