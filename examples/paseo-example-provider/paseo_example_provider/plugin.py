"""The plugin module the ``paseo`` entry point names: it registers the provider.

The daemon imports this at start-up, so it stays cheap: the provider (and its session code) is
imported only when the hook runs.
"""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import ProviderRegistrar


@hookimpl
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Register the ``example`` provider (custom providers may extend it)."""
    from paseo_example_provider.provider import ExampleProvider

    register(ExampleProvider())
