"""Hook implementations of the ACP provider plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import ProviderRegistrar


@hookimpl
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Register the generic ``acp`` provider (custom providers derive from it)."""
    from paseo_acp.provider import AcpProvider

    register(AcpProvider())
