"""The agent providers as a plugin may ask about them: :class:`ProviderCatalog`.

A narrow port next to the agent port (:mod:`paseo_hookspecs.agents`): creating an agent checks
its options itself, but a plugin that must vet a configuration *before* using it (a Paseo Hub
asks whether an agent configuration it is about to install is valid), or that maps a caller's
mode onto a child's provider by :data:`~paseo_hookspecs.interfaces.agent.ModeAccess`, needs the
providers, their models and their modes without starting anything. The kernel hands it to
plugins as ``DaemonContext.providers``.

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from paseo_hookspecs.interfaces.agent import ModeInfo, ModelInfo

__all__ = ["ProviderCatalog", "ProviderStatus", "ProviderSummary"]

ProviderStatus = Literal["ready", "loading", "error", "unavailable"]


class ProviderSummary(BaseModel):
    """One provider as ``provider.list`` shows it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    label: str
    extends: str | None = None
    """The provider a custom provider derives from."""
    enabled: bool
    order: float | None = None
    status: ProviderStatus
    reason: str | None = None
    """Why it is not ready."""
    checkedAt: str | None = None
    """ISO 8601 time of the last availability probe."""


class ProviderCatalog(Protocol):
    """The daemon's configured agent providers (``paseo provider ls``)."""

    async def check(self, provider: str) -> None:
        """Return when agents can be created with ``provider``; raise
        :class:`~paseo_hookspecs.errors.InvalidParams` (its message says why and what to do)
        when it is unknown, disabled or misconfigured. Starts nothing."""

    def default_provider(self) -> str | None:
        """The provider an agent that names none starts on (``None``: none is usable)."""

    def providers(self) -> list[ProviderSummary]:
        """Every provider, in display order, with its last known availability."""

    async def models(self, provider_id: str) -> list[ModelInfo]:
        """``provider_id``'s models (may ask its program; empty: it does not say).
        ``InvalidParams`` for an unknown or disabled provider, ``Unavailable`` when the
        listing fails or takes too long."""

    async def modes(self, provider_id: str) -> list[ModeInfo]:
        """``provider_id``'s modes, with their access levels; errors as :meth:`models`."""
