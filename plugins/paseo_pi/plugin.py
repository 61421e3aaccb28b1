"""Hook implementation of the Pi provider plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import ProviderRegistrar


@hookimpl
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Register the ``pi`` provider."""
    from paseo_pi.provider import PiProvider

    register(PiProvider())
