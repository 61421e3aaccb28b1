"""The ``provider.*`` RPC method group: the agent providers, their availability, models,
modes and features (the ``agent.*`` group is :mod:`paseo.agents.rpc`).

Handlers reach the :class:`paseo.agents.manager.AgentService` through the
:class:`~paseo.services.ServiceRef` the composition root binds.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.interfaces.agent import DraftConfig
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo.agents.models import (
    AvailabilityView,
    ModelView,
    ModeView,
    ProviderFeaturesParams,
    ProviderFeaturesResult,
    ProviderListParams,
    ProviderListResult,
    ProviderModelsParams,
    ProviderModelsResult,
    ProviderView,
    ThinkingView,
)
from paseo.agents.registry import listing
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.agents.manager import AgentService

OWNER = frozenset({"local", "remote"})


class _Handlers:
    """The handlers, reaching the service through ``ref`` at call time."""

    def __init__(self, ref: ServiceRef[AgentService]) -> None:
        self._ref = ref

    async def features(
        self, ctx: RpcContext, params: ProviderFeaturesParams
    ) -> ProviderFeaturesResult:
        service = self._ref.get()
        provider = service.registry.usable(params.providerId)
        draft = DraftConfig.model_validate(params.model_dump(exclude={"providerId"}))
        features = await listing(params.providerId, provider.list_features(draft, service.launcher))
        return ProviderFeaturesResult(providerId=params.providerId, features=features)

    async def list_providers(
        self, ctx: RpcContext, params: ProviderListParams
    ) -> ProviderListResult:
        registry = self._ref.get().registry
        entries = registry.entries()
        if params.refresh:
            await asyncio.gather(*(registry.probe(entry) for entry in entries))
        views = []
        for entry in entries:
            snapshot = registry.availability(entry.id)
            views.append(
                ProviderView(
                    id=entry.id,
                    label=entry.label,
                    extends=entry.extends,
                    enabled=entry.enabled,
                    order=entry.order,
                    availability=AvailabilityView(
                        status=snapshot.availability.status,
                        reason=snapshot.availability.reason,
                        checkedAt=snapshot.checked_at,
                    ),
                )
            )
        return ProviderListResult(providers=views)

    async def models(self, ctx: RpcContext, params: ProviderModelsParams) -> ProviderModelsResult:
        service = self._ref.get()
        provider = service.registry.usable(params.providerId)
        launcher = service.launcher
        models, listed_modes = await listing(
            params.providerId,
            asyncio.gather(provider.list_models(launcher), provider.list_modes(launcher)),
        )
        return ProviderModelsResult(
            providerId=params.providerId,
            models=[
                ModelView(
                    id=m.id,
                    label=m.label,
                    default=m.default,
                    thinkingOptions=[
                        ThinkingView(id=t.id, label=t.label) for t in m.thinkingOptions
                    ],
                )
                for m in models
            ],
            modes=[
                ModeView(id=m.id, label=m.label, description=m.description) for m in listed_modes
            ],
        )


def _method(name: str, handler: Any, params: Any, result: Any, summary: str) -> RpcMethod:
    return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)


def provider_group(ref: ServiceRef[AgentService]) -> RpcMethodGroup:
    """The ``provider`` method group, serving the service ``ref`` is bound to."""
    h = _Handlers(ref)
    return RpcMethodGroup(
        "provider",
        [
            _method(
                "provider.list",
                h.list_providers,
                ProviderListParams,
                ProviderListResult,
                "Agent providers with their availability",
            ),
            _method(
                "provider.models",
                h.models,
                ProviderModelsParams,
                ProviderModelsResult,
                "A provider's models and modes",
            ),
            _method(
                "provider.features",
                h.features,
                ProviderFeaturesParams,
                ProviderFeaturesResult,
                "The features a new agent of the provider would offer",
            ),
        ],
    )
