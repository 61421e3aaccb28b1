"""``DaemonContext.providers``: the kernel's provider catalog over the real provider registry —
models and modes of a usable provider, ``InvalidParams`` (saying why) for an unknown or
disabled one, ``Unavailable`` for one whose program never answers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.interfaces.agent import (
    AgentProvider,
    AgentSession,
    Availability,
    EventSink,
    ModeInfo,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher

from paseo.agents import registry
from paseo.agents.catalog import KernelProviderCatalog as ProviderCatalog
from paseo.agents.registry import ProviderRegistry


class Provider(AgentProvider):
    """Knows its models and modes; never starts a session here."""

    def __init__(self, provider_id: str, *, hang: bool = False) -> None:
        self.id = provider_id
        self.label = provider_id.title()
        self.hang = hang

    async def availability(self) -> Availability:
        return Availability(status="ready")

    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        if self.hang:
            await asyncio.sleep(3600)
        return [ModelInfo(id="small", label="Small", default=True)]

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        return [ModeInfo(id="default", label="Default")]

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        raise NotImplementedError

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        raise NotImplementedError


class Service:
    """What the catalog reads of the agent service: its registry and its launcher."""

    def __init__(self, overrides: dict[str, Any]) -> None:
        providers = {"alpha": Provider("alpha"), "slow": Provider("slow", hang=True)}
        self.registry = ProviderRegistry(providers, lambda: overrides)
        self.launcher: Any = None  # these providers know their lists: nothing is launched


def test_a_usable_provider_lists_its_models_and_modes() -> None:
    catalog = ProviderCatalog(Service({}))

    async def body() -> None:
        await catalog.check("alpha")
        assert [m.id for m in await catalog.models("alpha")] == ["small"]
        assert [m.id for m in await catalog.modes("alpha")] == ["default"]

    asyncio.run(body())


@pytest.mark.parametrize(
    ("provider", "overrides", "says"),
    [
        ("nope", {}, "unknown provider 'nope'"),
        ("alpha", {"alpha": {"enabled": False}}, "disabled"),
    ],
)
def test_an_unknown_or_disabled_provider_says_why(
    provider: str, overrides: dict[str, Any], says: str
) -> None:
    catalog = ProviderCatalog(Service(overrides))

    async def body() -> None:
        for ask in (catalog.check, catalog.models, catalog.modes):
            with pytest.raises(InvalidParams, match=says):
                await ask(provider)

    asyncio.run(body())


def test_a_provider_that_never_lists_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "LISTING_TIMEOUT", 0.05)
    catalog = ProviderCatalog(Service({}))

    async def body() -> None:
        with pytest.raises(Unavailable, match="did not list"):
            await asyncio.wait_for(catalog.models("slow"), 10)

    asyncio.run(body())
