"""Hook implementations of the ``claude`` provider plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import ProviderRegistrar


@hookimpl
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Register the ``claude`` provider (Claude Code found on PATH or via ``command``)."""
    from paseo_claude.provider import ClaudeProvider

    register(ClaudeProvider())
