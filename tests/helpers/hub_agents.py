"""Helpers of the Hub relationship tests (tests/unit/hub).

The thing under test is the plugin talking to the fake Hub over real HTTP and a real
WebSocket. The kernel side of the contract (:class:`paseo_hookspecs.hub_host.AgentControl`)
is played by :class:`Agents`, a small in-memory implementation of the Protocol that emits the
event vocabulary a real agent would.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs.hub_host import (
    AgentObserver,
    AgentSnapshot,
    CreateFailed,
    HubAgentCreate,
    HubAgentValidate,
    HubOwner,
    ValidationIssue,
)
from paseo_hub.service import HubService
from paseo_hub.settings import HubSettings

T = TypeVar("T")

FAST = HubSettings(
    httpTimeout=2.0,
    connectWait=5.0,
    openTimeout=2.0,
    pingInterval=5.0,
    pingTimeout=5.0,
    backoffInitial=0.05,
    backoffMax=0.2,
)
PROVIDERS = frozenset({"claude", "codex"})


def run(coroutine: Coroutine[Any, Any, T], within: float = 30.0) -> T:
    """Run a test body on a fresh loop, bounded."""

    async def bounded() -> T:
        async with asyncio.timeout(within):
            return await coroutine

    return asyncio.run(bounded())


class Agent:
    def __init__(self, agent_id: str, provider: str, owner: HubOwner | None) -> None:
        self.id = agent_id
        self.provider = provider
        self.owner = owner
        self.status = "initializing"
        self.archived = False
        self.live = True
        self.prompts: list[tuple[str, str]] = []
        self.spec: HubAgentCreate | None = None

    def snapshot(self) -> AgentSnapshot:
        return AgentSnapshot(
            id=self.id,
            status=self.status,  # type: ignore[arg-type]
            archived=self.archived,
            owner=self.owner,
            provider=self.provider,
        )


class Agents:
    """An in-memory AgentControl: agents persist across a simulated restart
    (:meth:`restart` marks them not live, as a daemon kill would)."""

    def __init__(self) -> None:
        self.agents: dict[str, Agent] = {}
        self.observers: list[AgentObserver] = []
        self.reloads: list[str] = []
        self._ids = itertools.count(1)

    # ------------------------------------------------------------ Protocol

    async def find_owned(self, owner: HubOwner) -> AgentSnapshot | None:
        for agent in self.agents.values():
            if agent.owner == owner:
                return agent.snapshot()
        return None

    async def list_owned(self, daemon_id: str) -> list[tuple[HubOwner, AgentSnapshot]]:
        return [
            (a.owner, a.snapshot())
            for a in self.agents.values()
            if a.owner is not None and a.owner.daemonId == daemon_id
        ]

    async def create_owned(self, spec: HubAgentCreate) -> AgentSnapshot:
        if spec.provider not in PROVIDERS:
            raise CreateFailed(f"unknown provider {spec.provider!r}")
        agent = Agent(f"agent-{next(self._ids)}", spec.provider, spec.owner)
        agent.spec = spec
        self.agents[agent.id] = agent
        self._update(agent)  # the record exists: observers learn its owner first
        self._emit(agent, {"type": "thread_started", "provider": agent.provider, "sessionId": "s"})
        return await self.send_prompt(agent.id, spec.prompt, spec.messageId)

    async def ensure_loaded(self, agent_id: str) -> AgentSnapshot:
        agent = self.agents[agent_id]
        if not agent.live and not agent.archived:
            agent.live = True
            agent.status = "idle"
            self.reloads.append(agent_id)
            self._update(agent)
        return agent.snapshot()

    async def send_prompt(self, agent_id: str, prompt: str, message_id: str) -> AgentSnapshot:
        agent = self.agents[agent_id]
        agent.prompts.append((prompt, message_id))
        agent.status = "running"
        self._update(agent)
        self._emit(agent, {"type": "turn_started", "provider": agent.provider})
        item = {"type": "user_message", "text": prompt, "messageId": message_id}
        self._emit(agent, {"type": "timeline", "provider": agent.provider, "item": item})
        return agent.snapshot()

    async def interrupt(self, agent_id: str) -> None:
        agent = self.agents[agent_id]
        if agent.status == "running":
            self._emit(agent, {"type": "turn_canceled", "provider": agent.provider,
                               "reason": "interrupted"})
            agent.status = "idle"
            self._update(agent)

    async def archive(self, agent_id: str) -> None:
        agent = self.agents[agent_id]
        agent.archived, agent.status = True, "closed"
        self._update(agent)

    async def validate(self, request: HubAgentValidate) -> list[ValidationIssue]:
        if request.provider not in PROVIDERS:
            return [ValidationIssue(path="provider", message="unknown provider")]
        return []

    def observe(self, observer: AgentObserver) -> Callable[[], None]:
        self.observers.append(observer)
        return lambda: self.observers.remove(observer)

    # --------------------------------------------------------- test driving

    def _emit(self, agent: Agent, event: Mapping[str, Any]) -> None:
        for observer in list(self.observers):
            observer.agent_event(agent.id, event)

    def _update(self, agent: Agent) -> None:
        for observer in list(self.observers):
            observer.agent_updated(agent.snapshot())

    def finish_turn(self, agent_id: str, text: str = "done") -> None:
        agent = self.agents[agent_id]
        item = {"type": "assistant_message", "text": text, "messageId": "m1"}
        self._emit(agent, {"type": "timeline", "provider": agent.provider, "item": item})
        self._emit(agent, {"type": "turn_completed", "provider": agent.provider})
        agent.status = "idle"
        self._update(agent)

    def local_agent(self) -> Agent:
        """An agent no Hub owns, running beside the Hub's."""
        agent = Agent(f"local-{next(self._ids)}", "claude", None)
        agent.status = "running"
        self.agents[agent.id] = agent
        self._emit(agent, {"type": "turn_started", "provider": "claude"})
        self._update(agent)
        return agent

    def restart(self) -> None:
        """What a daemon kill leaves: records survive, no provider runtime, no observers."""
        self.observers.clear()
        for agent in self.agents.values():
            agent.live = False
            if agent.status != "closed":
                agent.status = "closed"


class Host:
    def __init__(self, agents: Agents) -> None:
        self._agents = agents
        self.trusted = True

    @property
    def agents(self) -> Agents:
        return self._agents

    @property
    def daemon_public_key(self) -> str:
        return "cHVibGljLWtleQ"

    def is_trusted_local(self, ctx: Any) -> bool:
        return self.trusted


def service(home: Path, agents: Agents, settings: HubSettings = FAST) -> HubService:
    return HubService(home, Host(agents), server_id="srv_test", version="0.0", settings=settings)
