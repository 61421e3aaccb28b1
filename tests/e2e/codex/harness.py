"""Driving the ``codex`` provider in the mapping tests: an event recorder and process checks.

Built on the conformance suite's helpers (:mod:`paseo.testing.provider_conformance`), so every
event is also checked against the vocabulary and for the provider's id. Every wait is bounded:
turns get :data:`TURN_TIMEOUT`, which allows for Codex loading its large native binary on a
loaded machine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from helpers.agents_env import agent_binary, codex_env
from paseo_codex.provider import CodexProvider
from paseo_hookspecs.events import TERMINAL_TURN_EVENTS, AgentEvent
from paseo_hookspecs.interfaces.agent import AgentSession, SessionConfig

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import RecordingSink, agent_process_ids, assistant_text

TURN_TIMEOUT = 90.0
TEST_TIMEOUT = 240.0

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = TEST_TIMEOUT) -> T:
    """Run one async scenario with an overall bound."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def make_provider(
    fake: FakeModelServer, root: Path, proxy_env: dict[str, str] | None = None
) -> CodexProvider:
    """The ``codex`` provider running the pinned program against ``fake``, home under ``root``."""
    env = codex_env(fake.url, root, proxy_env=proxy_env)
    return CodexProvider(command=[str(agent_binary("codex"))], env=env)


def config(workdir: Path, agent_id: str = "agent-1", **fields: Any) -> SessionConfig:
    """A session config whose processes carry ``PASEO_AGENT_ID=agent_id``."""
    return SessionConfig(
        agentId=agent_id, cwd=str(workdir), env={"PASEO_AGENT_ID": agent_id}, **fields
    )


class Recorder(RecordingSink):
    """A checking sink with shortcuts for the mapping tests."""

    def __init__(self, provider_id: str = "codex") -> None:
        super().__init__(provider_id)

    def mark(self) -> int:
        """A position in the stream; pass it as ``since`` to look only at later events."""
        return len(self.events)

    async def first(
        self, predicate: Callable[[AgentEvent], bool], since: int = 0, what: str = "an event"
    ) -> AgentEvent:
        """The first event from ``since`` on matching ``predicate``."""
        return await self.wait_for(predicate, after=since, within=TURN_TIMEOUT, what=what)

    async def turn_end(self, since: int) -> AgentEvent:
        """The event that ended the turn started after ``since``."""
        return await self.first(lambda e: e.type in TERMINAL_TURN_EVENTS, since, "the turn end")

    def items(self, kind: str, since: int = 0) -> list[Any]:
        """Timeline items of ``kind`` (``assistant_message``, ``tool_call``, …)."""
        return [e.item for e in self.events[since:] if e.type == "timeline" and e.item.type == kind]

    def text(self, since: int = 0) -> str:
        """The assistant's text from ``since`` on (chunks joined)."""
        return assistant_text(self.events[since:])


async def prompt_and_wait(
    session: AgentSession, recorder: Recorder, text: str, message_id: str
) -> AgentEvent:
    """Run one turn to its end and return the terminal event."""
    since = recorder.mark()
    await session.prompt(text, message_id=message_id)
    return await recorder.turn_end(since)


async def assert_no_process(agent_id: str, within: float = 10.0) -> None:
    """Fail unless no process carrying ``PASEO_AGENT_ID=agent_id`` is left within ``within`` s."""
    deadline = time.monotonic() + within
    while left := await asyncio.to_thread(agent_process_ids, agent_id):
        if time.monotonic() > deadline:
            raise AssertionError(f"processes of agent {agent_id} outlived the session: {left}")
        await asyncio.sleep(0.05)
