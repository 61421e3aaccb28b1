"""Hook implementations of the relay plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import CliCommandGroup, CliRegistrar


@hookimpl
def paseo_register_cli_commands(register: CliRegistrar) -> None:
    """``paseo relay serve``."""
    from paseo_relay.serve_cli import configure

    register(CliCommandGroup("relay", "Run a relay server for remote pairing", configure))
