"""What the ACP provider does beyond the shared conformance scenarios, on real ACP agents:
settings from the agent's session config, deny-and-interrupt, resume without ``loadSession``,
agent failures (model error, crash mid-turn, exit or hang at start-up) and configuration errors.

Most tests use the Python test agent (``helpers/acp_test_agent.py``); one checks that
``claude-agent-acp``'s history replay during ``session/load`` is not emitted again (and that
its slash commands are kept).
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers import acp_test_agent
from helpers.agents_env import agent_binary, claude_agent_acp_env
from paseo_acp import AcpProvider
from paseo_acp.plugin import paseo_register_providers
from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.events import (
    AllowResolution,
    DenyResolution,
    PermissionRequested,
    Timeline,
)
from paseo_hookspecs.interfaces.agent import AgentProvider, AgentSession, SessionConfig

from paseo.testing.fake_model import FakeModelServer, RefusingProxy
from paseo.testing.provider_conformance import (
    RecordingSink,
    agent_process_ids,
    assistant_text,
    kernel_launcher,
)

LAUNCHER = kernel_launcher()

pytestmark = pytest.mark.e2e

T = TypeVar("T")
TURN = 60.0


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 240))


def python_provider(**overrides: Any) -> AgentProvider:
    return AcpProvider().derive(
        "acp-python", "ACP test agent", {"command": acp_test_agent.command(), **overrides}
    )


def config(tmp_path: Path, **fields: Any) -> SessionConfig:
    agent_id = f"acp-{uuid.uuid4().hex[:10]}"
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    env = {
        "PASEO_AGENT_ID": agent_id,
        acp_test_agent.STATE_DIR_VARIABLE: str(tmp_path / "agent-state"),
        **fields.pop("env", {}),
    }
    return SessionConfig(agentId=agent_id, cwd=str(cwd), env=env, **fields)


async def turn(session: AgentSession, sink: RecordingSink, text: str) -> list[Any]:
    start = len(sink.events)
    await session.prompt(text, message_id=f"m-{uuid.uuid4().hex[:6]}")
    end = await sink.wait_index(
        lambda e: e.type in ("turn_completed", "turn_failed", "turn_canceled"),
        after=start,
        within=TURN,
        what="the end of the turn",
    )
    return sink.events[start : end + 1]


class AllowingSink(RecordingSink):
    """Allows every permission request, from its own task as a client would."""

    session: AgentSession | None = None

    async def __call__(self, event: Any) -> None:
        await super().__call__(event)
        if isinstance(event, PermissionRequested) and self.session is not None:
            asyncio.get_running_loop().create_task(
                self.session.respond_permission(event.request.id, AllowResolution())
            )


async def closed_cleanly(session: AgentSession, sink: RecordingSink, agent_id: str) -> None:
    await session.close()
    assert await asyncio.to_thread(agent_process_ids, agent_id) == []
    assert sink.problems == []


def test_plugin_registers_the_generic_acp_provider_and_the_acp_programs() -> None:
    registered: list[AgentProvider] = []
    paseo_register_providers(registered.append)
    assert [p.id for p in registered] == ["acp", "copilot", "omp"]


def test_bare_acp_provider_needs_a_command(tmp_path: Path) -> None:
    provider = AcpProvider()
    availability = run(provider.availability())
    assert availability.status == "unavailable"
    assert availability.reason is not None
    assert '"extends": "acp"' in availability.reason
    with pytest.raises(Unavailable, match="command"):
        run(provider.create_session(config(tmp_path), RecordingSink("acp"), LAUNCHER))
    assert run(provider.list_models(LAUNCHER)) == []


def test_missing_program_is_unavailable(tmp_path: Path) -> None:
    provider = AcpProvider().derive("ghost", "Ghost", {"command": ["no-such-acp-agent-xyz"]})
    availability = run(provider.availability())
    assert availability.status == "unavailable"
    assert "no-such-acp-agent-xyz" in (availability.reason or "")
    with pytest.raises(Unavailable, match=r"no-such-acp-agent-xyz.*not found"):
        run(provider.create_session(config(tmp_path), RecordingSink("ghost"), LAUNCHER))
    assert run(python_provider().availability()).status == "ready"


def test_agent_exiting_or_hanging_at_startup(tmp_path: Path) -> None:
    exits = AcpProvider().derive(
        "exits", "Exits", {"command": [sys.executable, "-c", "import sys; sys.exit(7)"]}
    )
    with pytest.raises(Unavailable, match=r"exited during start-up.*exit code 7"):
        run(exits.create_session(config(tmp_path), RecordingSink("exits"), LAUNCHER))

    hangs = AcpProvider().derive(
        "hangs",
        "Hangs",
        {"command": [sys.executable, "-c", "import time; time.sleep(60)"], "startupTimeout": 1},
    )
    hang_config = config(tmp_path)
    with pytest.raises(Unavailable, match="did not finish starting within 1 s"):
        run(hangs.create_session(hang_config, RecordingSink("hangs"), LAUNCHER))
    assert agent_process_ids(hang_config.agentId) == []


def test_models_modes_and_thinking_come_from_the_agent(tmp_path: Path) -> None:
    provider = python_provider(
        additionalModels=[{"id": "extra-model", "label": "Extra"}],
    )

    async def scenario() -> None:
        models = await provider.list_models(LAUNCHER)
        assert [m.id for m in models] == ["test-fast", "test-smart", "extra-model"]
        assert models[0].default
        assert [t.id for t in models[0].thinkingOptions] == ["off", "low", "high"]
        assert [m.id for m in await provider.list_modes(LAUNCHER)] == ["default", "plan"]

        cfg = config(tmp_path, modeId="plan", model="test-smart", thinkingOptionId="high")
        sink = RecordingSink("acp-python")
        session = await provider.create_session(cfg, sink, LAUNCHER)
        info = session.runtime_info()
        assert (info["modeId"], info["model"], info["thinkingOptionId"]) == (
            "plan",
            "test-smart",
            "high",
        )
        # Plan mode runs no tools and asks nothing.
        events = await turn(session, sink, "[[write:plan.txt:x]]")
        assert not any(isinstance(e, PermissionRequested) for e in events)
        assert not (Path(cfg.cwd) / "plan.txt").exists()

        await session.set_mode("default")
        await session.set_model("test-fast")
        await session.set_thinking("low")
        info = session.runtime_info()
        assert (info["modeId"], info["model"], info["thinkingOptionId"]) == (
            "default",
            "test-fast",
            "low",
        )
        with pytest.raises(InvalidParams, match="unknown mode 'yolo'"):
            await session.set_mode("yolo")
        with pytest.raises(InvalidParams, match="unknown model"):
            await session.set_model("gpt-9")
        await closed_cleanly(session, sink, cfg.agentId)

    run(scenario())


def test_configured_models_replace_discovery() -> None:
    provider = python_provider(models=[{"id": "only", "label": "Only", "isDefault": True}])
    models = run(provider.list_models(LAUNCHER))
    assert [(m.id, m.default) for m in models] == [("only", True)]


def test_refused_initial_mode_fails_creation_and_leaves_nothing(tmp_path: Path) -> None:
    cfg = config(tmp_path, modeId="yolo")
    with pytest.raises(
        InvalidParams, match="unknown mode 'yolo'; this agent offers: default, plan"
    ):
        run(python_provider().create_session(cfg, RecordingSink("acp-python"), LAUNCHER))
    assert agent_process_ids(cfg.agentId) == []


def test_tool_details_and_reasoning(tmp_path: Path) -> None:
    async def scenario() -> None:
        cfg = config(tmp_path)
        sink = AllowingSink("acp-python")
        session = await python_provider().create_session(cfg, sink, LAUNCHER)
        sink.session = session
        events = await turn(session, sink, "[[think:pondering]] [[plan]] [[shell:echo shell-out]]")
        items = [e.item for e in events if isinstance(e, Timeline)]
        reasoning = [i for i in items if i.type == "reasoning"]
        assert [r.text for r in reasoning] == ["pondering"]
        assert any(i.type == "todo" and len(i.items) == 2 for i in items)
        tools = [i for i in items if i.type == "tool_call"]
        assert tools[0].status == "running"
        assert tools[-1].status == "completed"
        assert tools[-1].detail.type == "shell"
        assert tools[-1].detail.command == "echo shell-out"
        assert tools[-1].detail.output == "shell-out\n"
        assert tools[-1].detail.exitCode == 0
        assert "tool said: shell-out" in assistant_text(events)
        request = next(e for e in events if isinstance(e, PermissionRequested)).request
        assert request.input == {"command": "echo shell-out"}
        assert [o["kind"] for o in request.options] == [  # type: ignore[attr-defined]
            "allow_once",
            "allow_always",
            "reject_once",
        ]
        await closed_cleanly(session, sink, cfg.agentId)

    run(scenario())


def test_deny_and_interrupt_cancels_the_turn(tmp_path: Path) -> None:
    async def scenario() -> None:
        cfg = config(tmp_path)
        sink = RecordingSink("acp-python")
        session = await python_provider().create_session(cfg, sink, LAUNCHER)
        start = len(sink.events)
        await session.prompt("[[shell:echo no > never.txt]]", message_id="m1")
        requested = await sink.wait_for(
            lambda e: isinstance(e, PermissionRequested), after=start, within=TURN, what="ask"
        )
        assert isinstance(requested, PermissionRequested)
        await session.respond_permission(
            requested.request.id, DenyResolution(message="stop", interrupt=True)
        )
        end = await sink.wait_for(
            lambda e: e.type.startswith("turn_") and e.type != "turn_started",
            after=start,
            within=TURN,
            what="turn end",
        )
        assert end.type == "turn_canceled"
        assert not (Path(cfg.cwd) / "never.txt").exists()
        resolved = [e for e in sink.events if e.type == "permission_resolved"]
        assert [r.resolution.behavior for r in resolved] == ["deny"]
        assert (await turn(session, sink, "still there"))[-1].type == "turn_completed"
        await closed_cleanly(session, sink, cfg.agentId)

    run(scenario())


def test_interrupt_while_a_permission_is_pending(tmp_path: Path) -> None:
    async def scenario() -> None:
        cfg = config(tmp_path)
        sink = RecordingSink("acp-python")
        session = await python_provider().create_session(cfg, sink, LAUNCHER)
        start = len(sink.events)
        await session.prompt("[[write:pending.txt:x]]", message_id="m1")
        requested = await sink.wait_for(
            lambda e: isinstance(e, PermissionRequested), after=start, within=TURN, what="ask"
        )
        await session.interrupt()
        assert sink.events[-1].type == "turn_canceled"
        resolved = [e for e in sink.events if e.type == "permission_resolved"]
        assert [r.requestId for r in resolved] == [requested.request.id]  # type: ignore[union-attr]
        assert not (Path(cfg.cwd) / "pending.txt").exists()
        await closed_cleanly(session, sink, cfg.agentId)

    run(scenario())


def test_model_error_fails_the_turn_and_the_session_carries_on(tmp_path: Path) -> None:
    async def scenario() -> None:
        cfg = config(tmp_path)
        sink = RecordingSink("acp-python")
        session = await python_provider().create_session(cfg, sink, LAUNCHER)
        events = await turn(session, sink, "[[error:500:the model is on fire]]")
        failed = events[-1]
        assert failed.type == "turn_failed"
        assert "the model is on fire" in failed.error
        assert (await turn(session, sink, "hello"))[-1].type == "turn_completed"
        await closed_cleanly(session, sink, cfg.agentId)

    run(scenario())


def test_agent_crash_mid_turn_fails_the_turn(tmp_path: Path) -> None:
    async def scenario() -> None:
        cfg = config(tmp_path)
        sink = RecordingSink("acp-python")
        session = await python_provider().create_session(cfg, sink, LAUNCHER)
        events = await turn(session, sink, "[[crash]]")
        assert events[-1].type == "turn_failed"
        assert events[-1].code == "process_exited"
        assert "exit code 3" in events[-1].error
        assert await asyncio.to_thread(agent_process_ids, cfg.agentId) == []
        with pytest.raises(Unavailable, match="exited"):
            await session.prompt("again", message_id="m2")
        await closed_cleanly(session, sink, cfg.agentId)

    run(scenario())


def test_resume_without_load_session_starts_over_and_says_so(tmp_path: Path) -> None:
    async def scenario() -> None:
        cfg = config(tmp_path, env={acp_test_agent.NO_LOAD_VARIABLE: "1"})
        provider = python_provider()
        sink = RecordingSink("acp-python")
        session = await provider.create_session(cfg, sink, LAUNCHER)
        assert (await turn(session, sink, "remember"))[-1].type == "turn_completed"
        handle = session.persistence_handle()
        assert handle is not None
        await closed_cleanly(session, sink, cfg.agentId)

        resumed_sink = RecordingSink("acp-python")
        resumed = await provider.resume_session(handle, cfg, resumed_sink, LAUNCHER)
        assert resumed.session_id != handle.sessionId
        assert resumed.runtime_info()["resumed"] is False
        await resumed_sink.wait_for(
            lambda e: (
                isinstance(e, Timeline)
                and e.item.type == "error"
                and "cannot resume" in e.item.message
            ),
            within=TURN,
            what="the resume note",
        )
        assert (await turn(resumed, resumed_sink, "again"))[-1].type == "turn_completed"
        await closed_cleanly(resumed, resumed_sink, cfg.agentId)

    run(scenario())


def test_claude_agent_acp_replay_is_not_emitted_again(tmp_path: Path) -> None:
    binary = agent_binary("claude-agent-acp")

    async def scenario() -> None:
        async with FakeModelServer() as fake, RefusingProxy() as proxy:
            env = {**claude_agent_acp_env(fake.url, tmp_path), **proxy.proxy_env()}
            provider = AcpProvider().derive("claude-acp", "Claude ACP", {"command": [str(binary)]})
            cfg = config(tmp_path, modeId="default", env=env)
            sink = RecordingSink("claude-acp")
            session = await provider.create_session(cfg, sink, LAUNCHER)
            assert (await turn(session, sink, "[[reply:first answer]]"))[-1].type == (
                "turn_completed"
            )
            # The adapter announces Claude Code's slash commands (available_commands_update).
            commands = session.commands()
            assert commands, "claude-agent-acp sent no available_commands_update"
            assert all(c.name and not c.name.startswith("/") for c in commands)
            assert any(c.argumentHint for c in commands)  # ``input.hint``, e.g. "[prompt]"
            handle = session.persistence_handle()
            assert handle is not None
            await closed_cleanly(session, sink, cfg.agentId)

            resumed_sink = RecordingSink("claude-acp")
            resumed = await provider.resume_session(handle, cfg, resumed_sink, LAUNCHER)
            assert resumed.runtime_info()["modeId"] == "default"
            assert not [e for e in resumed_sink.events if isinstance(e, Timeline)]
            events = await turn(resumed, resumed_sink, "[[reply:second answer]]")
            assert assistant_text(events) == "second answer"
            await closed_cleanly(resumed, resumed_sink, cfg.agentId)
            assert proxy.attempts == []

    run(scenario())


def test_a_failed_probe_is_an_error_not_an_empty_list() -> None:
    provider = AcpProvider().derive(
        "quitter", "Quitter", {"command": [sys.executable, "-c", "import sys; sys.exit(3)"]}
    )
    with pytest.raises(Unavailable, match="probe session failed"):
        run(provider.list_models(LAUNCHER))
    with pytest.raises(Unavailable, match=r"agents\.providers\.quitter\.command"):
        run(provider.list_modes(LAUNCHER))
