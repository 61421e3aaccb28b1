"""The provider catalog: which agent providers exist, and their models and modes.

A plugin that starts agents on a caller's behalf (for example mapping a parent's mode onto a
child's provider by :data:`~paseo_hookspecs.interfaces.agent.ModeAccess`) reads the catalog
when its :class:`~paseo_hookspecs.context.DaemonContext` is a :class:`ProviderCatalogSource`.

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from paseo_hookspecs.interfaces.agent import ModeInfo, ModelInfo

ProviderStatus = Literal["ready", "loading", "error", "unavailable"]


class ProviderSummary(BaseModel):
    """One provider as ``provider.list`` shows it."""

    model_config = ConfigDict(frozen=True)

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
    def default_provider(self) -> str | None:
        """The provider an agent that names none starts on (``None``: none is usable)."""

    def providers(self) -> list[ProviderSummary]:
        """Every provider, in display order, with its last known availability."""

    async def models(self, provider_id: str) -> list[ModelInfo]:
        """``provider_id``'s models (may ask its program). ``InvalidParams`` for an unknown or
        disabled provider, ``Unavailable`` when the listing fails or takes too long."""

    async def modes(self, provider_id: str) -> list[ModeInfo]:
        """``provider_id``'s modes, with their access levels; errors as :meth:`models`."""


@runtime_checkable
class ProviderCatalogSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that offers the catalog."""

    @property
    def provider_catalog(self) -> ProviderCatalog: ...


__all__ = ["ProviderCatalog", "ProviderCatalogSource", "ProviderStatus", "ProviderSummary"]
