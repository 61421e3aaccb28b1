"""Hook implementations of the relay plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import (
    CliCommandGroup,
    ClientConnectorRegistrar,
    CliRegistrar,
    TransportRegistrar,
)


@hookimpl
def paseo_register_cli_commands(register: CliRegistrar) -> None:
    """``paseo relay serve`` and ``paseo daemon pair``."""
    from paseo_relay.pair_cli import configure as configure_pair
    from paseo_relay.serve_cli import configure as configure_serve

    register(CliCommandGroup("relay", "Run a relay server for remote pairing", configure_serve))
    register(
        CliCommandGroup(
            "pair",
            "print the pairing offer (URL and QR) for the relay",
            configure_pair,
            parent="daemon",
        )
    )


@hookimpl
def paseo_register_client_connectors(register: ClientConnectorRegistrar) -> None:
    """Offer URLs (``--host "https://app.paseo.sh/#offer=…"``) through the relay."""
    from paseo_relay.connector import RelayConnector

    register(RelayConnector())


@hookimpl
def paseo_register_transports(register: TransportRegistrar) -> None:
    """The daemon's relay connection (active when ``daemon.relay.enabled``; docs/relay.md)."""
    from paseo_relay.transport import RelayTransport

    register(RelayTransport())
