"""Hook implementation of the Codex provider plugin."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import ProviderRegistrar


@hookimpl
def paseo_register_providers(register: ProviderRegistrar) -> None:
    """Register the ``codex`` provider."""
    from paseo_codex.provider import CodexProvider

    register(CodexProvider())
