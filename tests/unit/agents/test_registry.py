"""The provider registry: plugin providers, config overrides, derived providers, availability."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.agent import (
    AgentProvider,
    AgentSession,
    Availability,
    EventSink,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher

from paseo.agents import registry as registry_module
from paseo.agents.registry import ProviderRegistry


class Provider(AgentProvider):
    """A provider whose availability is scripted; it never starts sessions here."""

    def __init__(self, provider_id: str, answer: Any = None, overrides: Any = None) -> None:
        self.id = provider_id
        self.label = provider_id.title()
        self.answer = answer or Availability(status="ready")
        self.overrides = overrides

    async def availability(self) -> Availability:
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.answer == "hang":
            await asyncio.sleep(3600)
        assert isinstance(self.answer, Availability)
        return self.answer

    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        return [ModelInfo(id="m", label="M")]

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

    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        derived = Provider(provider_id, overrides=overrides)
        derived.label = label
        return derived


class Rigid(Provider):
    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        return AgentProvider.derive(self, provider_id, label, overrides)


def _registry(config: dict[str, dict[str, Any]], **providers: AgentProvider) -> ProviderRegistry:
    return ProviderRegistry(providers, lambda: config)


def test_custom_providers_derive_and_report_their_own_id() -> None:
    config: dict[str, dict[str, Any]] = {
        "zai": {"extends": "base", "label": "Z.ai", "command": ["zai"], "env": {"K": "V"}},
        "ghost": {"extends": "absent", "label": "Ghost"},
        "stiff": {"extends": "rigid", "label": "Stiff"},
    }
    registry = _registry(config, base=Provider("base"), rigid=Rigid("rigid"))
    zai = registry.entry("zai")
    assert zai.extends == "base"
    assert zai.label == "Z.ai"
    assert zai.provider is not None
    assert zai.provider.id == "zai"
    assert zai.provider.label == "Z.ai"
    assert isinstance(zai.provider, Provider)
    assert zai.provider.overrides == {"command": ["zai"], "env": {"K": "V"}}
    assert registry.entry("zai").provider is zai.provider, "derived once per config"
    ghost = registry.entry("ghost")
    assert ghost.provider is None
    assert "not installed" in str(ghost.problem)
    with pytest.raises(InvalidParams, match="not installed"):
        registry.usable("ghost")
    with pytest.raises(InvalidParams, match="cannot be extended"):
        registry.usable("stiff")
    with pytest.raises(InvalidParams, match="known: base, ghost, rigid, stiff, zai"):
        registry.entry("nope")


def test_overrides_of_plugin_providers_order_label_and_disable() -> None:
    config: dict[str, dict[str, Any]] = {
        "b": {"order": 1, "label": "Bee"},
        "c": {"enabled": False},
        "a": {"command": ["other-a"]},
    }
    registry = _registry(config, a=Provider("a"), b=Provider("b"), c=Provider("c"))
    assert [(e.id, e.label) for e in registry.entries()] == [("b", "Bee"), ("a", "A"), ("c", "C")]
    tuned = registry.usable("a")
    assert isinstance(tuned, Provider)
    assert tuned.overrides == {"command": ["other-a"]}
    with pytest.raises(InvalidParams, match="disabled"):
        registry.usable("c")


def test_availability_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "PROBE_TIMEOUT", 0.2)
    config: dict[str, dict[str, Any]] = {"off": {"extends": "ok", "label": "Off", "enabled": False}}
    registry = _registry(
        config,
        ok=Provider("ok"),
        missing=Provider(
            "missing", Availability(status="unavailable", reason="install missing-cli")
        ),
        broken=Provider("broken", RuntimeError("kaput")),
        slow=Provider("slow", "hang"),
    )
    assert registry.availability("ok").availability.status == "loading"
    assert registry.default_provider() is None

    asyncio.run(registry.refresh())
    status = {
        e.id: (
            registry.availability(e.id).availability.status,
            registry.availability(e.id).availability.reason,
        )
        for e in registry.entries()
    }
    assert status["ok"] == ("ready", None)
    assert status["missing"] == ("unavailable", "install missing-cli")
    assert status["broken"][0] == "error"
    assert "kaput" in str(status["broken"][1])
    assert status["slow"][0] == "error"
    assert "did not answer" in str(status["slow"][1])
    assert status["off"][0] == "unavailable"
    assert "disabled" in str(status["off"][1])
    assert registry.default_provider() == "ok"


def test_adding_a_custom_provider_does_not_change_the_default() -> None:
    config: dict[str, dict[str, Any]] = {}
    registry = _registry(config, zed=Provider("zed"))
    asyncio.run(registry.refresh())
    assert registry.default_provider() == "zed"
    # A custom provider sorting before the plugin's id by name does not take over...
    config["aaa"] = {"extends": "zed", "label": "A custom one"}
    asyncio.run(registry.refresh())
    assert registry.entry("aaa").provider is not None
    assert registry.default_provider() == "zed"
    # ...unless it asks to with `order`.
    config["aaa"]["order"] = 0
    assert registry.default_provider() == "aaa"


def test_an_explicit_default_provider_wins() -> None:
    chosen: list[str | None] = ["base"]
    registry = ProviderRegistry(
        {"base": Provider("base"), "alpha": Provider("alpha")}, dict, default=lambda: chosen[0]
    )
    asyncio.run(registry.refresh())
    assert registry.default_provider() == "base"
    chosen[0] = None
    assert registry.default_provider() == "alpha"
