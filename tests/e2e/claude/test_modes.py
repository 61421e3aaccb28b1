"""Modes, models, thinking levels, custom (derived) providers and plugin registration."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.claude.harness import Claude, claude_provider, run
from helpers.agents_env import agent_binary
from paseo_claude import plugin
from paseo_claude.provider import DEFAULT_MODELS, ClaudeProvider
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.events import AllowResolution

from paseo.plugins.manager import PaseoPluginManager
from paseo.plugins.policy import LoadPolicy
from paseo.testing.provider_conformance import assistant_text, kernel_launcher

LAUNCHER = kernel_launcher()


def _asked(events: list[object]) -> bool:
    return any(getattr(e, "type", None) == "permission_requested" for e in events)


def test_lists_modes_models_and_thinking_levels() -> None:
    provider = ClaudeProvider()

    async def body() -> None:
        modes = [m.id for m in await provider.list_modes(LAUNCHER)]
        assert modes == ["default", "acceptEdits", "plan", "bypassPermissions"]
        models = await provider.list_models(LAUNCHER)
        assert [m.id for m in models if m.default] == ["claude-opus-5-5"]
        assert {"low", "medium", "high", "max"} <= {t.id for t in models[0].thinkingOptions}

    run(body())


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
def test_modes_that_write_without_asking(claude: Claude, mode: str) -> None:
    async def body() -> None:
        try:
            agent = await claude.start(modeId=mode)
            events = await agent.turn("[[write:auto.txt:no questions]]")
            assert events[-1].type == "turn_completed"
            assert not _asked(events)
            assert (Path(agent.config.cwd) / "auto.txt").read_text() == "no questions"
            assert agent.session.runtime_info()["modeId"] == mode
        finally:
            await claude.close_all()

    run(body())


@pytest.mark.e2e
def test_plan_mode_asks_and_switching_modes_live(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start(modeId="plan")
            assert agent.session.runtime_info()["modeId"] == "plan"
            events = await agent.turn("[[write:planned.txt:x]]", permission=AllowResolution())
            assert _asked(events)
            await agent.session.set_mode("acceptEdits")
            assert agent.session.runtime_info()["modeId"] == "acceptEdits"
            events = await agent.turn("[[write:edited.txt:y]]")
            assert not _asked(events)
            assert (Path(agent.config.cwd) / "edited.txt").read_text() == "y"
            with pytest.raises(InvalidParams):
                await agent.session.set_mode("yolo")
        finally:
            await claude.close_all()

    run(body())


@pytest.mark.e2e
def test_model_and_thinking_reach_the_model_request(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start(model="claude-sonnet-5-5", thinkingOptionId="low")
            await agent.turn("[[reply:one]] first-marker")
            first = [r for r in claude.fake.model_requests() if "first-marker" in r.prompt][-1]
            assert first.json["model"] == "claude-sonnet-5-5"
            assert first.json.get("output_config", {}).get("effort") == "low"

            await agent.session.set_model("claude-haiku-5-5")
            await agent.session.set_thinking("max")
            info = agent.session.runtime_info()
            assert (info["model"], info["thinkingOptionId"]) == ("claude-haiku-5-5", "max")
            await agent.turn("[[reply:two]] second-marker")
            second = [r for r in claude.fake.model_requests() if "second-marker" in r.prompt][-1]
            assert second.json["model"] == "claude-haiku-5-5"
            assert second.json.get("output_config", {}).get("effort") == "max"
            with pytest.raises(InvalidParams):
                await agent.session.set_thinking("enormous")
        finally:
            await claude.close_all()

    run(body())


@pytest.mark.e2e
def test_custom_provider_reports_its_own_id(claude: Claude) -> None:
    claude.provider = claude_provider().derive(
        "claude-lite",
        "Claude (no shell)",
        {
            "command": [str(agent_binary("claude"))],
            "env": {"PASEO_CUSTOM_MARKER": "1"},
            "additionalModels": [{"id": "claude-internal-1", "label": "Internal"}],
            "disallowedTools": ["Bash"],
        },
    )

    async def body() -> None:
        try:
            assert claude.provider.id == "claude-lite"
            assert claude.provider.label == "Claude (no shell)"
            models = [m.id for m in await claude.provider.list_models(LAUNCHER)]
            assert models == [*(m.id for m in DEFAULT_MODELS), "claude-internal-1"]
            agent = await claude.start()
            events = await agent.turn("[[reply:derived]]")
            assert assistant_text(events) == "derived"
            assert {e.provider for e in agent.events} == {"claude-lite"}
            handle = agent.session.persistence_handle()
            assert handle is not None
            assert handle.provider == "claude-lite"
            request = claude.fake.model_requests()[-1]
            assert "Bash" not in request.tool_names
            assert "Write" in request.tool_names
        finally:
            await claude.close_all()

    run(body())


def test_bad_overrides_are_invalid_params() -> None:
    provider = ClaudeProvider()
    with pytest.raises(InvalidParams):
        provider.derive("x", "X", {"command": []})
    with pytest.raises(InvalidParams):
        provider.derive("x", "X", {"disallowedTools": "Bash"})
    with pytest.raises(InvalidParams):
        provider.derive("x", "X", {"models": [{"label": "no id"}]})


def test_plugin_registers_the_claude_provider() -> None:
    manager = PaseoPluginManager(LoadPolicy(strict=True))
    manager.register(plugin, "claude", builtin=True)
    providers = manager.providers()
    assert isinstance(providers["claude"], ClaudeProvider)
    assert providers["claude"].label == "Claude Code"
