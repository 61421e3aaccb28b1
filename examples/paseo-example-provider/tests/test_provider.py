"""What the example provider offers beyond the conformance scenarios: modes, edited input,
errors a user can act on, and the settings of a derived provider. The sessions run exactly as in
the conformance suite (its harness, the fake model, the kernel's launcher)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from paseo_example_provider.provider import ExampleProvider
from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.events import AllowResolution, PermissionRequested, Timeline, TurnFailed
from paseo_hookspecs.interfaces.agent import PersistenceHandle
from test_conformance import TestExampleProvider as _Suite  # not collected again: no Test name

from paseo.testing.provider_conformance import (
    ConformanceHarness,
    ProviderConformance,
    kernel_launcher,
)

_Body = Callable[[ProviderConformance, ConformanceHarness], Coroutine[Any, Any, None]]


def _run(body: _Body, tmp_path: Path) -> None:
    _Suite().run_conformance_test(body, tmp_path)


def test_auto_mode_writes_without_asking(tmp_path: Path) -> None:
    async def body(suite: ProviderConformance, h: ConformanceHarness) -> None:
        agent = await h.start()
        with pytest.raises(InvalidParams, match="unknown mode 'yolo'"):
            await agent.session.set_mode("yolo")
        await agent.session.set_mode("auto")
        assert agent.session.runtime_info()["modeId"] == "auto"
        events = await agent.turn(suite.prompt_write("auto.txt", "no questions"))
        assert events[-1].type == "turn_completed", events[-1]
        assert not any(isinstance(e, PermissionRequested) for e in events)
        assert (Path(agent.config.cwd) / "auto.txt").read_text() == "no questions"

    _run(body, tmp_path)


def test_allowed_with_edited_content_writes_the_edit(tmp_path: Path) -> None:
    async def body(suite: ProviderConformance, h: ConformanceHarness) -> None:
        agent = await h.start()
        edited = AllowResolution(updatedInput={"path": "edited.txt", "content": "the edit"})
        events = await agent.turn(suite.prompt_write("edited.txt", "original"), permission=edited)
        assert events[-1].type == "turn_completed", events[-1]
        assert (Path(agent.config.cwd) / "edited.txt").read_text() == "the edit"

    _run(body, tmp_path)


def test_unknown_conversation_is_not_found_and_unknown_mode_refused(tmp_path: Path) -> None:
    async def body(suite: ProviderConformance, h: ConformanceHarness) -> None:
        gone = PersistenceHandle(provider="example", sessionId="0123abcd")
        with pytest.raises(NotFound, match="no stored conversation 0123abcd"):
            await h.resume(gone, h.new_config())
        with pytest.raises(InvalidParams, match="unknown mode 'yolo'; modes: ask, auto"):
            await h.start(h.new_config().model_copy(update={"modeId": "yolo"}))

    _run(body, tmp_path)


def test_corrupt_conversation_file_is_not_found(tmp_path: Path) -> None:
    async def body(suite: ProviderConformance, h: ConformanceHarness) -> None:
        state = h.root / "state"
        state.mkdir()
        (state / "0badf11e.json").write_text("{not json")
        with pytest.raises(NotFound, match="conversation 0badf11e is unreadable"):
            await h.resume(
                PersistenceHandle(provider="example", sessionId="0badf11e"), h.new_config()
            )

    _run(body, tmp_path)


def test_unreachable_endpoint_fails_the_turn_saying_what_to_check(tmp_path: Path) -> None:
    async def body(suite: ProviderConformance, h: ConformanceHarness) -> None:
        config = h.new_config()
        # Port 9 (discard) on loopback: nothing listens there in a test environment.
        config.env["EXAMPLE_AGENT_BASE_URL"] = "http://127.0.0.1:9/v1"
        agent = await h.start(config)
        events = await agent.turn(suite.prompt_text("unreachable"))
        failed = events[-1]
        assert isinstance(failed, TurnFailed), failed
        assert "cannot reach the model endpoint" in failed.error
        assert "EXAMPLE_AGENT_BASE_URL" in failed.error
        timeline = [e.item.type for e in events if isinstance(e, Timeline)]
        assert timeline == ["user_message"], "nothing was streamed before the failure"

    _run(body, tmp_path)


def test_derived_provider_settings() -> None:
    base = ExampleProvider()
    assert asyncio.run(base.availability()).status in ("ready", "unavailable")
    derived = base.derive(
        "example-large",
        "Example (large)",
        {
            "env": {"EXAMPLE_AGENT_BASE_URL": "http://127.0.0.1:9/v1"},
            "models": [{"id": "big", "label": "Big", "isDefault": True}],
            "additionalModels": [{"id": "tiny", "label": "Tiny"}],
        },
    )
    assert derived.id == "example-large"
    assert asyncio.run(derived.availability()).status == "ready"
    models = asyncio.run(derived.list_models(kernel_launcher()))
    assert [(m.id, m.default) for m in models] == [("big", True), ("tiny", False)]
    with pytest.raises(InvalidParams, match="does not support command"):
        base.derive("mine", "Mine", {"command": ["other-agent"]})
