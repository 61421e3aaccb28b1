"""Hook implementations of the WebSocket transport plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import (
    ConfigSection,
    ConfigSectionRegistrar,
    TransportRegistrar,
)


@hookimpl
def paseo_register_transports(register: TransportRegistrar) -> None:
    """Register the WebSocket listener (``daemon.listen``)."""
    from paseo_websocket.transport import WebSocketTransport

    register(WebSocketTransport())


@hookimpl
def paseo_register_config_sections(register: ConfigSectionRegistrar) -> None:
    """Limits live at ``plugins.websocket.settings`` in config.json."""
    from paseo_websocket.settings import WebSocketSettings

    register(ConfigSection(WebSocketSettings, "WebSocket transport limits"))
