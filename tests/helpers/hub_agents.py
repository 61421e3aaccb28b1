"""Helpers of the Hub relationship tests (tests/unit/hub).

The thing under test is the plugin — its owner-scoped agent control, pre-approval, resume
intents and auto-archive — talking to the fake Hub over real HTTP and a real WebSocket. The
kernel's side is the agent port (:mod:`paseo_hookspecs.agents`), played by :class:`Agents`: a
small in-memory implementation of the part of the port the plugin uses, storing real
:class:`~paseo_hookspecs.records.AgentRecord` s (with the plugin's ``recordFields``), refusing a
repeated message id as the kernel does, and delivering the typed event vocabulary a real agent
emits to its subscribers in order. Delivery is awaited inline (each test step returns once every
observer saw it), which the contract allows and keeps the tests free of timing.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs.agents import (
    AgentCreate,
    AgentObserver,
    AgentPage,
    AgentQuery,
    PermissionAnswer,
    RecordChange,
    RecordChangeKind,
    SendResult,
    TimelineEntry,
)
from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.events import (
    AgentEvent,
    AllowResolution,
    AssistantMessageItem,
    DenyResolution,
    PermissionRequest,
    PermissionRequested,
    PermissionResolved,
    ThreadStarted,
    Timeline,
    TurnCanceled,
    TurnCompleted,
    TurnStarted,
    UserMessageItem,
)
from paseo_hookspecs.interfaces.agent import ModeInfo, ModelInfo
from paseo_hookspecs.records import AgentRecord
from paseo_hub.agents import HubAgents
from paseo_hub.relationship import KEYPAIR_FILE
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
PUBLIC_KEY = base64.b64encode(b"k" * 32).decode("ascii")
"""The daemon public key of every test home (:func:`service` writes the keypair file)."""
log = logging.getLogger("tests.hub")


def run(coroutine: Coroutine[Any, Any, T], within: float = 30.0) -> T:
    """Run a test body on a fresh loop, bounded."""

    async def bounded() -> T:
        async with asyncio.timeout(within):
            return await coroutine

    return asyncio.run(bounded())


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class Agent:
    """One agent's state; :meth:`record` is what the port hands out."""

    def __init__(self, agent_id: str, spec: AgentCreate) -> None:
        self.id = agent_id
        self.spec = spec
        self.provider = spec.provider or "claude"
        self.status = "initializing"
        self.archived = False
        self.live = True
        self.prompts: list[tuple[str, str]] = []
        self.sent: set[str] = set()
        """Message ids already sent (the kernel finds them in the durable timeline)."""
        self.pending: dict[str, PermissionRequest] = {}
        self.created_at = _now()

    @property
    def owner(self) -> Any:
        return self.spec.recordFields.get("owner")

    @property
    def grants(self) -> Any:
        return self.spec.recordFields.get("hubToolPolicy")

    def record(self) -> AgentRecord:
        document: dict[str, Any] = {
            **self.spec.recordFields,
            "id": self.id,
            "provider": self.provider,
            "cwd": self.spec.cwd or "/",
            "createdAt": self.created_at,
            "updatedAt": _now(),
            "labels": dict(self.spec.labels),
            "lastStatus": self.status,
        }
        if self.archived:
            document["archivedAt"] = _now()
        return AgentRecord.model_validate(document)


class _Subscription:
    def __init__(self, subscribers: list[_Subscription], observer: AgentObserver) -> None:
        self._subscribers = subscribers
        self.observer = observer
        subscribers.append(self)

    def close(self) -> None:
        if self in self._subscribers:
            self._subscribers.remove(self)


class Providers:
    """The :class:`paseo_hookspecs.providers.ProviderCatalog` of :data:`PROVIDERS`."""

    async def check(self, provider: str) -> None:
        if provider not in PROVIDERS:
            raise InvalidParams("unknown provider")

    async def models(self, provider: str) -> list[ModelInfo]:
        await self.check(provider)
        return []

    async def modes(self, provider: str) -> list[ModeInfo]:
        await self.check(provider)
        return []


class Agents:
    """An in-memory agent port: agents persist across a simulated restart
    (:meth:`restart` marks them not live, as a daemon kill would)."""

    def __init__(self) -> None:
        self.agents: dict[str, Agent] = {}
        self.subscribers: list[_Subscription] = []
        self.reloads: list[str] = []
        self.answers: list[tuple[str, str, PermissionAnswer]] = []
        self.providers = Providers()
        self.held: builtins.list[Callable[[AgentObserver], Awaitable[None]]] | None = None
        """Facts queued while :meth:`hold` is in force (a subscriber that is behind)."""
        self._ids = itertools.count(1)
        self._seq = itertools.count(1)

    # ------------------------------------------------------ AgentControl

    async def create(self, spec: AgentCreate) -> AgentRecord:
        if spec.provider not in PROVIDERS:
            raise InvalidParams(f"unknown provider {spec.provider!r}")
        known = set(AgentRecord.model_fields) & set(spec.recordFields)
        if known:
            raise InvalidParams(f"recordFields names record fields: {sorted(known)}")
        agent = Agent(f"agent-{next(self._ids)}", spec)
        self.agents[agent.id] = agent
        await self._record(agent, "created")  # observers learn its owner first
        await self._emit(agent, ThreadStarted(provider=agent.provider, sessionId="s"))
        agent.status = "idle"  # the session is ready, before the first turn
        await self._record(agent)
        if spec.initialPrompt is not None:
            await self.send(agent.id, spec.initialPrompt, message_id=spec.messageId)
        return agent.record()

    def _agent(self, agent_id: str) -> Agent:
        agent = self.agents.get(agent_id)
        if agent is None:
            raise NotFound(f"no agent {agent_id!r}")
        return agent

    async def get(self, agent: str) -> AgentRecord:
        return self._agent(agent).record()

    async def list(
        self,
        query: AgentQuery | None = None,
        *,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> AgentPage:
        query = query or AgentQuery()
        matching = [
            a.record() for a in self.agents.values() if query.include_archived or not a.archived
        ]
        start = int(cursor or 0)
        end = len(matching) if limit is None else start + limit
        next_cursor = str(end) if end < len(matching) else None
        return AgentPage(items=matching[start:end], next_cursor=next_cursor)

    async def send(
        self,
        agent_id: str,
        text: str,
        *,
        message_id: str | None = None,
        images: Sequence[Any] = (),
    ) -> SendResult:
        agent = self._agent(agent_id)
        message_id = message_id or f"m{next(self._seq)}"
        if message_id in agent.sent:
            return SendResult(agent=agent.record(), message_id=message_id, accepted=False)
        agent.sent.add(message_id)
        agent.prompts.append((text, message_id))
        agent.status = "running"
        await self._record(agent)
        await self._emit(agent, TurnStarted(provider=agent.provider))
        item = UserMessageItem(text=text, messageId=message_id)
        await self._emit(agent, Timeline(provider=agent.provider, item=item))
        return SendResult(agent=agent.record(), message_id=message_id, accepted=True)

    async def interrupt(self, agent_id: str) -> AgentRecord:
        agent = self._agent(agent_id)
        if agent.status == "running":
            await self._emit(agent, TurnCanceled(provider=agent.provider, reason="interrupted"))
            agent.status = "idle"
            await self._record(agent)
        return agent.record()

    async def archive(self, agent_id: str, *, force: bool = False) -> AgentRecord:
        agent = self._agent(agent_id)
        agent.archived, agent.status = True, "closed"
        await self._record(agent)
        return agent.record()

    async def ensure_session(self, agent_id: str) -> AgentRecord:
        agent = self._agent(agent_id)
        if not agent.live and not agent.archived:
            agent.live = True
            agent.status = "idle"
            self.reloads.append(agent_id)
            await self._record(agent)
        return agent.record()

    async def pending_permissions(self, agent_id: str) -> builtins.list[PermissionRequest]:
        return list(self._agent(agent_id).pending.values())

    async def answer_permission(
        self, agent_id: str, request_id: str, answer: PermissionAnswer
    ) -> AgentRecord:
        agent = self._agent(agent_id)
        request = agent.pending.pop(request_id, None)
        if request is None:
            raise NotFound(f"no pending permission request {request_id!r}")
        self.answers.append((agent_id, request_id, answer))
        resolution: AllowResolution | DenyResolution = (
            AllowResolution() if answer.behavior == "allow" else DenyResolution()
        )
        resolved = PermissionResolved(
            provider=agent.provider, requestId=request_id, resolution=resolution
        )
        await self._emit(agent, resolved)
        await self._deliver(lambda o: o.on_permission_resolved(agent_id, request_id, resolution))
        return agent.record()

    # ------------------------------------------------------- AgentEvents

    def subscribe(
        self,
        observer: AgentObserver,
        *,
        name: str,
        max_pending: int = 1024,
        include_internal: bool = False,
    ) -> _Subscription:
        return _Subscription(self.subscribers, observer)

    async def _deliver(self, call: Callable[[AgentObserver], Awaitable[None]]) -> None:
        if self.held is not None:
            self.held.append(call)
            return
        for subscription in list(self.subscribers):
            try:
                await call(subscription.observer)
            except Exception:
                # As the kernel does: logged, and the subscriber keeps receiving.
                log.exception("an agent observer failed")

    async def _emit(self, agent: Agent, event: AgentEvent) -> None:
        entry = TimelineEntry(seq=next(self._seq), epoch="e1", timestamp=_now(), event=event)
        await self._deliver(lambda o: o.on_event(agent.id, entry))

    async def _record(self, agent: Agent, kind: RecordChangeKind = "updated") -> None:
        change = RecordChange(kind=kind, record=agent.record())
        await self._deliver(lambda o: o.on_record(change))

    # --------------------------------------------------------- test driving

    def hold(self) -> None:
        """From now on, facts wait in the subscribers' queues (they are behind the agents)."""
        self.held = []

    async def release(self, *, lost: bool = False) -> None:
        """Deliver what waited, in order — or, with ``lost``, drop it and say how much was
        lost (``on_overflow``), as a full queue does."""
        held, self.held = self.held or [], None
        if lost:
            await self._deliver(lambda o: o.on_overflow(len(held)))
            return
        for call in held:
            await self._deliver(call)

    async def finish_turn(self, agent_id: str, text: str = "done") -> None:
        agent = self.agents[agent_id]
        item = AssistantMessageItem(text=text, messageId="m1")
        await self._emit(agent, Timeline(provider=agent.provider, item=item))
        await self._emit(agent, TurnCompleted(provider=agent.provider))
        agent.status = "idle"
        await self._record(agent)

    async def ask(self, agent_id: str, tool: str) -> str:
        """The agent's program asks to run ``tool``; the request's id."""
        agent = self.agents[agent_id]
        request = PermissionRequest(id=f"perm-{next(self._seq)}", title=tool, toolName=tool)
        agent.pending[request.id] = request
        await self._emit(agent, PermissionRequested(provider=agent.provider, request=request))
        await self._deliver(lambda o: o.on_permission_requested(agent_id, request))
        return request.id

    async def local_agent(self) -> Agent:
        """An agent no Hub owns, running beside the Hub's."""
        agent = Agent(f"local-{next(self._ids)}", AgentCreate(provider="claude", cwd="/local"))
        agent.status = "running"
        self.agents[agent.id] = agent
        await self._record(agent, "created")
        await self._emit(agent, TurnStarted(provider="claude"))
        return agent

    def restart(self) -> None:
        """What a daemon kill leaves: records survive, no provider runtime, no observers."""
        self.subscribers.clear()
        for agent in self.agents.values():
            agent.live = False
            if agent.status != "closed":
                agent.status = "closed"


def write_keypair(home: Path) -> None:
    """What the daemon writes before any plugin starts (the secret is never read)."""
    secret = base64.b64encode(b"s" * 32).decode("ascii")
    document = {"v": 2, "publicKeyB64": PUBLIC_KEY, "secretKeyB64": secret}
    (home / KEYPAIR_FILE).write_text(json.dumps(document))


def service(home: Path, agents: Agents, settings: HubSettings = FAST) -> HubService:
    if home.is_dir():
        write_keypair(home)
    return HubService(
        home,
        HubAgents(agents, agents.providers),  # type: ignore[arg-type]
        server_id="srv_test",
        version="0.0",
        settings=settings,
    )
