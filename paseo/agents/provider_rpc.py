"""The ``provider.*`` RPC method group: the agent providers, their availability, models,
modes and features (the ``agent.*`` group is :mod:`paseo.agents.rpc`).

Handlers reach the :class:`paseo.agents.manager.AgentService` through the
:class:`~paseo.services.ServiceRef` the composition root binds.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.interfaces.agent import DraftConfig
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo.agents.models import (
    AvailabilityView,
    ModelView,
    ModeView,
    ProgramView,
    ProviderDiagnosticParams,
    ProviderDiagnosticResult,
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
from paseo.processes.programs import program_version
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

    async def diagnostic(
        self, ctx: RpcContext, params: ProviderDiagnosticParams
    ) -> ProviderDiagnosticResult:
        """What ``paseo doctor`` checks of one provider, asked of the daemon (whose PATH and
        environment agents start with): probed now, its program's path and version, and how
        many models it lists when it is ready."""
        service = self._ref.get()
        registry = service.registry
        entry = registry.entry(params.providerId)
        snapshot = await registry.probe(entry)
        program = None
        profile = None
        if entry.provider is not None:
            try:
                profile = entry.provider.terminal_profile()
            except Exception:  # noqa: BLE001 - a plugin's fault; the probe's reason says more
                profile = None
        if profile is not None and profile.command:
            # `--version` is bounded (VERSION_WAIT); off the loop, it never stalls the daemon.
            path, version = await asyncio.to_thread(
                program_version, profile.command, dict(os.environ)
            )
            program = ProgramView(command=profile.command, path=path, version=version)
        models: int | None = None
        models_error: str | None = None
        if snapshot.availability.status == "ready" and entry.enabled:
            try:
                listed = await listing(
                    params.providerId,
                    registry.usable(params.providerId).list_models(service.launcher),
                )
                models = len(listed)
            except PaseoError as exc:
                models_error = exc.message
            except Exception as exc:  # noqa: BLE001 - a diagnostic reports a plugin's fault
                models_error = str(exc) or type(exc).__name__
        return ProviderDiagnosticResult(
            providerId=entry.id,
            label=entry.label,
            enabled=entry.enabled,
            availability=AvailabilityView(
                status=snapshot.availability.status,
                reason=snapshot.availability.reason,
                checkedAt=snapshot.checked_at,
            ),
            program=program,
            models=models,
            modelsError=models_error,
        )

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
            _method(
                "provider.diagnostic",
                h.diagnostic,
                ProviderDiagnosticParams,
                ProviderDiagnosticResult,
                "One provider probed now: availability, its program's path and version, models",
            ),
        ],
    )
