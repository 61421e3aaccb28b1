"""Bad input: model HTTP errors, a missing program, start-up exits and hangs, a lost transcript.

Each ends in an event or ``Unavailable`` whose message says what happened and what to do; no
process survives.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from e2e.claude.harness import Claude, run
from paseo_claude.provider import ClaudeOptions, ClaudeProvider
from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.events import AgentEvent, TurnFailed
from paseo_hookspecs.interfaces.agent import PersistenceHandle, SessionConfig

from paseo.testing.fake_model import RefusingProxy
from paseo.testing.provider_conformance import agent_process_ids, kernel_launcher

LAUNCHER = kernel_launcher()


@pytest.mark.e2e
def test_http_error_fails_the_turn_with_advice(claude: Claude) -> None:
    async def body() -> None:
        try:
            agent = await claude.start()
            events = await agent.turn("[[error:529:the fake is overloaded]]")
            failed = events[-1]
            assert isinstance(failed, TurnFailed)
            assert failed.code == "http_529"
            assert "the fake is overloaded" in failed.error
            assert "529" in failed.error
            assert "wait a moment and send the prompt again" in failed.error
            assert not [
                e for e in events if e.type == "timeline" and e.item.type == "assistant_message"
            ], "the API error is reported once, as turn_failed"
            follow_up = await agent.turn("[[reply:recovered]]")
            assert follow_up[-1].type == "turn_completed"
        finally:
            await claude.close_all()

    run(body())


@pytest.mark.e2e
def test_api_retries_are_shown_live_as_timeline_items(claude: Claude) -> None:
    async def body() -> None:
        try:
            config = claude.config()
            config.env["CLAUDE_CODE_MAX_RETRIES"] = "2"
            agent = await claude.start(config)
            events = await agent.turn("[[error:500:the fake model broke]]")
            retries = [
                e.item.message
                for e in events
                if e.type == "timeline" and e.item.type == "error"
            ]
            assert len(retries) == 2, retries
            assert all("model API error: HTTP 500" in text for text in retries)
            assert "retrying (attempt 1 of 2)" in retries[0]
            assert isinstance(events[-1], TurnFailed)
        finally:
            await claude.close_all()

    run(body())


async def _discard(event: AgentEvent) -> None:
    return None


def _config(tmp_path: Path, agent_id: str = "agt-bad-input") -> SessionConfig:
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    return SessionConfig(agentId=agent_id, cwd=str(cwd), env={"PASEO_AGENT_ID": agent_id})


@pytest.mark.parametrize("command", ["claude-not-installed-here", "/nonexistent/bin/claude"])
def test_missing_program_is_unavailable(tmp_path: Path, command: str) -> None:
    provider = ClaudeProvider(options=ClaudeOptions(command=(command,)))

    async def body() -> None:
        availability = await provider.availability()
        assert availability.status == "unavailable"
        assert availability.reason is not None
        assert "npm i -g @anthropic-ai/claude-code" in availability.reason
        assert "agents.providers.claude.command" in availability.reason
        with pytest.raises(Unavailable, match="npm i -g @anthropic-ai/claude-code"):
            await provider.create_session(_config(tmp_path), _discard, LAUNCHER)

    run(body())


def test_exit_during_startup_is_unavailable_with_stderr(tmp_path: Path) -> None:
    script = "echo 'claude: broken install (missing native binary)' >&2; exit 3"
    provider = ClaudeProvider(options=ClaudeOptions(command=("sh", "-c", script, "claude")))

    async def body() -> None:
        with pytest.raises(Unavailable) as caught:
            await provider.create_session(_config(tmp_path), _discard, LAUNCHER)
        message = caught.value.message
        assert "exited during start-up (exit code 3)" in message
        assert "broken install (missing native binary)" in message

    run(body())


def test_hang_at_initialize_is_bounded(tmp_path: Path) -> None:
    provider = ClaudeProvider(
        options=ClaudeOptions(command=("sh", "-c", "exec sleep 600", "claude"), startup_timeout=2.0)
    )
    config = _config(tmp_path, "agt-hangs")

    async def body() -> None:
        started = time.monotonic()
        with pytest.raises(Unavailable, match="did not answer its start-up handshake within 2s"):
            await provider.create_session(config, _discard, LAUNCHER)
        assert time.monotonic() - started < 30
        assert await asyncio.to_thread(agent_process_ids, "agt-hangs") == []

    run(body())


def test_bypass_as_root_without_sandbox_is_refused_before_start(tmp_path: Path) -> None:
    import os

    if os.geteuid() != 0:
        pytest.skip("the IS_SANDBOX rule applies to root only")
    provider = ClaudeProvider(options=ClaudeOptions(command=("sh",)))
    config = _config(tmp_path).model_copy(update={"modeId": "bypassPermissions"})

    async def body() -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv("IS_SANDBOX", raising=False)
            with pytest.raises(Unavailable, match="IS_SANDBOX=1"):
                await provider.create_session(config, _discard, LAUNCHER)

    run(body())


@pytest.mark.e2e
def test_resuming_a_lost_conversation_is_unavailable(claude: Claude) -> None:
    async def body() -> None:
        config = claude.config()
        handle = PersistenceHandle(
            provider="claude",
            sessionId="0b6f9f8e-7a43-4d52-9a55-1f0e4c1c2b3d",
            nativeHandle="0b6f9f8e-7a43-4d52-9a55-1f0e4c1c2b3d",
        )
        with pytest.raises(Unavailable) as caught:
            await claude.provider.resume_session(handle, config, _discard, LAUNCHER)
        assert "No conversation found" in caught.value.message
        assert "start a new agent" in caught.value.message
        assert await asyncio.to_thread(agent_process_ids, config.agentId) == []

    run(body())


@pytest.mark.e2e
def test_the_refusing_proxy_sees_what_would_leave(claude: Claude) -> None:
    """The positive control for every test's empty proxy log: Claude Code routes a non-loopback
    model URL through the proxy, which refuses it, and the turn fails saying so. (Slow: Claude
    Code retries its start-up calls to a first-party URL for ~20 s before it answers.)"""

    async def body() -> None:
        async with RefusingProxy() as outside:
            config = claude.config()
            env = {
                **config.env,
                **outside.proxy_env(),
                "ANTHROPIC_BASE_URL": "https://api.anthropic.com",
            }
            try:
                agent = await claude.start(config.model_copy(update={"env": env}))
                events = await agent.turn("[[reply:unreachable]]")
                assert isinstance(events[-1], TurnFailed)
                assert "proxy" in events[-1].error
            finally:
                await claude.close_all()
            assert "CONNECT api.anthropic.com:443" in outside.attempts

    run(body())
