"""Hook calls are isolated per implementation."""

from __future__ import annotations

import logging

import pytest
from paseo_hookspecs import hookimpl
from paseo_hookspecs.events import TurnStarted

from paseo.plugins import LoadPolicy, PaseoPluginManager, PluginLoadError


class Failing:
    @hookimpl
    def paseo_agent_event(self, agent_id, provider, event):
        raise RuntimeError("tap exploded")


class Recording:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def paseo_agent_event(self, agent_id, provider, event):
        self.seen.append(agent_id)


def test_a_failing_event_tap_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    manager = PaseoPluginManager(LoadPolicy(strict=False))
    recording = Recording()
    manager.register(Failing(), "failing")
    manager.register(recording, "recording")
    with caplog.at_level(logging.ERROR, logger="paseo.plugins"):
        manager.agent_event("agent-1", "claude", TurnStarted(provider="claude"))
    assert recording.seen == ["agent-1"]
    assert "tap exploded" in caplog.text
    failing = next(r for r in manager.records if r.name == "failing")
    assert failing.error == "paseo_agent_event: RuntimeError: tap exploded"


def test_event_taps_follow_plugins_registered_and_unregistered_between_calls() -> None:
    manager = PaseoPluginManager(LoadPolicy(strict=True))
    first, second = Recording(), Recording()
    manager.register(first, "first")
    manager.agent_event("agent-1", "claude", TurnStarted(provider="claude"))
    manager.register(second, "second")
    manager.agent_event("agent-2", "claude", TurnStarted(provider="claude"))
    manager.unregister("first")
    manager.agent_event("agent-3", "claude", TurnStarted(provider="claude"))
    assert first.seen == ["agent-1", "agent-2"]
    assert second.seen == ["agent-2", "agent-3"]


def test_strict_mode_raises_on_a_failing_hook() -> None:
    manager = PaseoPluginManager(LoadPolicy(strict=True))
    manager.register(Failing(), "failing")
    with pytest.raises(PluginLoadError, match="tap exploded"):
        manager.agent_event("agent-1", "claude", TurnStarted(provider="claude"))


def test_startup_is_historic_for_late_plugins() -> None:
    calls: list[str] = []

    class Late:
        @hookimpl
        def paseo_startup(self, context):
            calls.append("late")

    manager = PaseoPluginManager(LoadPolicy(strict=True))
    context = object()
    manager.startup(context)  # type: ignore[arg-type]
    assert calls == []
    manager.register(Late(), "late")
    assert calls == ["late"]


def test_duplicate_provider_ids_keep_the_first() -> None:
    class Provider:
        def __init__(self, label: str) -> None:
            self.id = "same"
            self.label = label

    class A:
        @hookimpl
        def paseo_register_providers(self, register):
            register(Provider("a"))

    class B:
        @hookimpl
        def paseo_register_providers(self, register):
            register(Provider("b"))

    manager = PaseoPluginManager(LoadPolicy(strict=True))
    manager.register(A(), "a")
    manager.register(B(), "b")
    providers = manager.providers()
    assert list(providers) == ["same"]
    assert providers["same"].label == "a"
