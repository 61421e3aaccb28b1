"""Hook implementations of the ACP provider plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import ProviderRegistrar


@hookimpl
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Register the generic ``acp`` provider (custom providers derive from it) and the
    built-in ACP programs ``copilot`` and ``omp``."""
    from paseo_acp.copilot import CopilotProvider
    from paseo_acp.omp import OmpProvider
    from paseo_acp.provider import AcpProvider

    register(AcpProvider())
    register(CopilotProvider())
    register(OmpProvider())
