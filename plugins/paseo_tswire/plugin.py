"""Hook implementations of the TypeScript wire protocol transport."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import (
    ConfigSection,
    ConfigSectionRegistrar,
    TransportRegistrar,
)


@hookimpl
def paseo_register_transports(register: TransportRegistrar) -> None:
    """Serve the TypeScript protocol (a socket in the home; optionally TCP)."""
    from paseo_tswire.transport import TsWireTransport

    register(TsWireTransport())


@hookimpl
def paseo_register_config_sections(register: ConfigSectionRegistrar) -> None:
    """Where it listens lives at ``plugins.tswire.settings`` in config.json."""
    from paseo_tswire.settings import TsWireSettings

    register(ConfigSection(TsWireSettings, "TypeScript wire protocol transport"))
