"""The provider conformance suite on the ACP provider, with two real ACP agents.

- ``claude-agent-acp``: the pinned ``@agentclientprotocol/claude-agent-acp`` running the pinned
  Claude Code against the fake Anthropic server. Its default mode (``auto``) decides permissions
  itself, so sessions run in ``default``, where it asks.
- ``codex-acp`` (``@zed-industries/codex-acp``), Zed's Codex adapter, against the fake's OpenAI
  Responses API: the generic path on a second real program. (Zed's ``claude-code-acp`` is a
  documented recipe instead: after a denied tool it ends the turn before Claude's answer to
  the denial, which then lands in the next turn; see docs/providers.md.)
- The Python test agent (``helpers/acp_test_agent.py``, written with the ACP Python SDK). It
  answers from the prompt's directives without calling a model, so the three scenarios that
  prove the conversation reached the model check the agent's own stored history instead.

Both run as custom providers derived from ``acp``: every event and handle carries the derived id.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from helpers import acp_test_agent
from helpers.agents_env import agent_binary, claude_agent_acp_env, codex_acp_env
from paseo_acp import AcpProvider
from paseo_hookspecs.events import Timeline
from paseo_hookspecs.interfaces.agent import AgentProvider, PersistenceHandle

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import (
    ConformanceHarness,
    ProviderConformance,
    agent_process_ids,
    assistant_text,
    conformance_test,
)

pytestmark = pytest.mark.e2e


class TestClaudeAgentAcp(ProviderConformance):
    """``claude-agent-acp`` as a custom provider ``{"extends": "acp", "command": [...]}``."""

    permission_mode: ClassVar[str | None] = "default"

    def make_provider(self) -> AgentProvider:
        binary = agent_binary("claude-agent-acp")
        return AcpProvider().derive("claude-acp", "Claude ACP", {"command": [str(binary)]})

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return claude_agent_acp_env(fake.url, root)


class TestCodexAcp(ProviderConformance):
    """``codex-acp`` 0.16 as a custom provider, asking under ``approval_policy="untrusted"``."""

    def make_provider(self) -> AgentProvider:
        binary = agent_binary("codex-acp")
        return AcpProvider().derive("codex-acp", "Codex ACP", {"command": [str(binary)]})

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return codex_acp_env(fake.url, root)


def _history(h: ConformanceHarness, session_id: str | None) -> list[dict[str, Any]]:
    path = h.root / "agent-state" / f"{session_id}.json"
    history: list[dict[str, Any]] = json.loads(path.read_text())["history"]
    return history


class TestPythonAcpAgent(ProviderConformance):
    """The SDK-built test agent; history checks read its session files, not model requests."""

    def make_provider(self) -> AgentProvider:
        return AcpProvider().derive(
            "acp-python", "ACP test agent", {"command": acp_test_agent.command()}
        )

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return {acp_test_agent.STATE_DIR_VARIABLE: str(root / "agent-state")}

    @conformance_test
    async def test_text_turn(self, h: ConformanceHarness) -> None:
        """A prompt gets a streamed answer, the turn completes and the session is resumable."""
        agent = await h.start()
        events = await agent.turn(self.prompt_text("text-marker"))
        assert [events[0].type, events[-1].type] == ["turn_started", "turn_completed"]
        assert assistant_text(events) == "text-marker"
        assert any(e.type == "thread_started" for e in agent.events)
        handle = agent.session.persistence_handle()
        assert handle is not None
        assert handle.provider == "acp-python"
        assert handle.nativeHandle == agent.session.session_id

    @conformance_test
    async def test_second_turn_keeps_the_conversation(self, h: ConformanceHarness) -> None:
        """Both turns land in the same agent session."""
        agent = await h.start()
        assert (await agent.turn(self.prompt_text("first")))[-1].type == "turn_completed"
        events = await agent.turn(self.prompt_text("second"))
        assert events[-1].type == "turn_completed"
        texts = [entry["text"] for entry in _history(h, agent.session.session_id)]
        assert texts == [self.prompt_text("first"), "first", self.prompt_text("second"), "second"]

    @conformance_test
    async def test_close_and_resume(self, h: ConformanceHarness) -> None:
        """``session/load`` in a new process continues the stored conversation; the replayed
        history is not emitted again."""
        agent = await h.start()
        assert (await agent.turn(self.prompt_text("before")))[-1].type == "turn_completed"
        handle = agent.session.persistence_handle()
        assert handle is not None
        await agent.session.close()
        assert await asyncio.to_thread(agent_process_ids, agent.agent_id) == []
        stored = PersistenceHandle.model_validate_json(handle.model_dump_json())
        resumed = await h.resume(stored, agent.config)
        assert resumed.session.session_id == handle.sessionId
        assert resumed.session.runtime_info()["resumed"] is True
        assert not [e for e in resumed.events if isinstance(e, Timeline)]
        events = await resumed.turn(self.prompt_text("after"))
        assert events[-1].type == "turn_completed"
        texts = [entry["text"] for entry in _history(h, handle.sessionId)]
        assert texts[1::2] == ["before", "after"]
