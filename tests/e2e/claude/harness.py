"""Shared pieces of the ``claude`` provider tests: the real pinned Claude Code against the fake.

Each test gets a fake model server, a refusing proxy that must see no attempt, and a private
root (HOME, transcripts) under ``tmp_path``. Sessions are driven directly through the provider
interface with the recording sink of :mod:`paseo.testing.provider_conformance`; every wait is
bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.agents_env import agent_binary, claude_code_env
from paseo_claude.provider import ClaudeOptions, ClaudeProvider
from paseo_hookspecs.interfaces.agent import AgentProvider, SessionConfig
from paseo_hookspecs.records import new_agent_id

from paseo.testing.fake_model import FakeModelServer, RefusingProxy
from paseo.testing.provider_conformance import (
    ConformanceAgent,
    RecordingSink,
    agent_process_ids,
    kernel_launcher,
)

LAUNCHER = kernel_launcher()

T = TypeVar("T")

START_TIMEOUT = 120.0
TURN_TIMEOUT = 90.0
TEST_TIMEOUT = 240.0


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a test body on a fresh event loop, bounded by :data:`TEST_TIMEOUT`."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, TEST_TIMEOUT)

    return asyncio.run(bounded())


def claude_provider(**options: Any) -> ClaudeProvider:
    """The provider running the pinned Claude Code."""
    return ClaudeProvider(options=ClaudeOptions(command=(str(agent_binary("claude")),), **options))


@dataclass
class Claude:
    """Sessions of one test, closed (and checked for leftovers) by :meth:`close_all`."""

    fake: FakeModelServer
    proxy: RefusingProxy
    root: Path
    provider: AgentProvider = field(default_factory=claude_provider)
    agents: list[ConformanceAgent] = field(default_factory=list)

    def config(self, **fields: Any) -> SessionConfig:
        agent_id = new_agent_id()
        cwd = self.root / f"work-{agent_id[:8]}"
        cwd.mkdir(parents=True)
        env = {
            **claude_code_env(self.fake.url, self.root, max_retries=0),
            **self.proxy.proxy_env(),
            "PASEO_AGENT_ID": agent_id,
        }
        return SessionConfig(agentId=agent_id, cwd=str(cwd), env=env, **fields)

    async def start(self, config: SessionConfig | None = None, **fields: Any) -> ConformanceAgent:
        config = config or self.config(**fields)
        sink = RecordingSink(self.provider.id)
        session = await asyncio.wait_for(
            self.provider.create_session(config, sink, LAUNCHER), START_TIMEOUT
        )
        agent = ConformanceAgent(config.agentId, config, sink, session, TURN_TIMEOUT)
        self.agents.append(agent)
        return agent

    async def close_all(self) -> None:
        for agent in self.agents:
            await agent.session.close()
        for agent in self.agents:
            assert await asyncio.to_thread(agent_process_ids, agent.agent_id) == []
            assert agent.sink.problems == []


@pytest.fixture
def claude(fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path) -> Claude:
    return Claude(fake, proxy, tmp_path / "claude")
