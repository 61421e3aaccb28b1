"""Hook implementation of the OpenCode provider plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import ProviderRegistrar


@hookimpl
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Register the ``opencode`` provider."""
    from paseo_opencode.provider import OpenCodeProvider

    register(OpenCodeProvider())
