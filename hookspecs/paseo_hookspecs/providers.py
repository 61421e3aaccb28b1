"""The agent providers as a plugin may ask about them: :class:`ProviderCatalog`.

A narrow port next to the agent port (:mod:`paseo_hookspecs.agents`): creating an agent checks
its options itself, but a plugin that must vet a configuration *before* using it (a Paseo Hub
asks whether an agent configuration it is about to install is valid) needs the provider's
models and modes without starting anything. The kernel hands it to plugins as
``DaemonContext.providers``.

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Protocol

from paseo_hookspecs.interfaces.agent import ModeInfo, ModelInfo

__all__ = ["ProviderCatalog"]


class ProviderCatalog(Protocol):
    """The daemon's configured agent providers (``paseo provider ls``)."""

    async def check(self, provider: str) -> None:
        """Return when agents can be created with ``provider``; raise
        :class:`~paseo_hookspecs.errors.InvalidParams` (its message says why and what to do)
        when it is unknown, disabled or misconfigured. Starts nothing."""

    async def models(self, provider: str) -> list[ModelInfo]:
        """The models ``provider`` offers (empty: it does not say); raises as :meth:`check`."""

    async def modes(self, provider: str) -> list[ModeInfo]:
        """The modes ``provider`` offers (empty: it does not say); raises as :meth:`check`."""
