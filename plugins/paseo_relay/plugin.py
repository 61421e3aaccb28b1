"""Hook implementations of the relay plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import TransportRegistrar


@hookimpl
def paseo_register_transports(register: TransportRegistrar) -> None:
    """The daemon's relay connection (active when ``daemon.relay.enabled``; docs/relay.md)."""
    from paseo_relay.transport import RelayTransport

    register(RelayTransport())
