"""The contract's :class:`~paseo_hookspecs.providers.ProviderCatalog` over the provider
registry (what ``provider.list`` and ``provider.models`` answer from), for plugins.

Listing is bounded as the RPC's is: a provider whose program does not answer is
``Unavailable``, never a call that hangs its caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from paseo_hookspecs.providers import ProviderSummary

from paseo.agents.registry import listing

if TYPE_CHECKING:
    from paseo_hookspecs.interfaces.agent import ModeInfo, ModelInfo
    from paseo_hookspecs.process import ProcessLauncher

    from paseo.agents.registry import ProviderRegistry


class _Providers(Protocol):
    """What the catalog needs of the agent service (read when asked: both exist once the
    service started)."""

    @property
    def registry(self) -> ProviderRegistry: ...

    @property
    def launcher(self) -> ProcessLauncher: ...


class KernelProviderCatalog:
    """See the module docstring."""

    def __init__(self, service: _Providers) -> None:
        self._service = service

    async def check(self, provider: str) -> None:
        self._service.registry.usable(provider)

    def default_provider(self) -> str | None:
        return self._service.registry.default_provider()

    def providers(self) -> list[ProviderSummary]:
        registry = self._service.registry
        summaries = []
        for entry in registry.entries():
            snapshot = registry.availability(entry.id)
            summaries.append(
                ProviderSummary(
                    id=entry.id,
                    label=entry.label,
                    extends=entry.extends,
                    enabled=entry.enabled,
                    order=entry.order,
                    status=snapshot.availability.status,
                    reason=snapshot.availability.reason,
                    checkedAt=snapshot.checked_at,
                )
            )
        return summaries

    async def models(self, provider_id: str) -> list[ModelInfo]:
        provider = self._service.registry.usable(provider_id)
        return list(await listing(provider_id, provider.list_models(self._service.launcher)))

    async def modes(self, provider_id: str) -> list[ModeInfo]:
        provider = self._service.registry.usable(provider_id)
        return list(await listing(provider_id, provider.list_modes(self._service.launcher)))
