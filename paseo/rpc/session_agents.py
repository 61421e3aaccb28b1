"""The agent port as one admitted session may use it (``SessionHandle.agents``).

A transport that serves another protocol over the daemon's services (the TypeScript wire)
drives agents through :mod:`paseo_hookspecs.agents` rather than by encoding JSON-RPC frames
into its session. What it is handed must not let its client do more than the same client
could over ``/ws``, so every call here is admitted exactly as the session admits a frame:

* the method it stands for (:data:`METHODS`) must be in the session kind's allowlist — the
  same ``access`` the ``agent.*`` methods declare (a ``hub`` session gets none of them);
* the daemon must be accepting calls and the session must have said ``server.hello``;
* it spends one token of the session's rate limit and counts against its calls in flight;
* ``create`` takes only what ``agent.create`` takes: the port's plugin-only fields (a worktree
  target, extra environment, plugin-owned record fields) are refused;
* observing needs read access to the ``agents`` stream, never includes the daemon's internal
  agents, and every subscription ends with the session's connection.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from paseo_hookspecs.agents import (
    AgentCreate,
    AgentObserver,
    AgentPage,
    AgentQuery,
    Agents,
    PermissionAnswer,
    SendResult,
    SessionContributor,
    Subscription,
    TimelinePage,
    WaitResult,
)
from paseo_hookspecs.errors import AccessDenied, PaseoError

if TYPE_CHECKING:
    from paseo_hookspecs.events import PermissionRequest
    from paseo_hookspecs.interfaces.agent import PromptImage
    from paseo_hookspecs.records import AgentRecord

T = TypeVar("T")

METHODS: dict[str, str] = {
    "create": "agent.create",
    "get": "agent.get",
    "list": "agent.list",
    "send": "agent.send",
    "interrupt": "agent.interrupt",
    "stop": "agent.stop",
    "archive": "agent.archive",
    "restore": "agent.restore",
    "delete": "agent.delete",
    "pending_permissions": "agent.permissions.list",
    "all_pending_permissions": "agent.permissions.list",
    "answer_permission": "agent.permissions.respond",
    "set_mode": "agent.mode.set",
    "set_model": "agent.model.set",
    "update": "agent.update",
    "wait": "agent.wait",
    "ensure_session": "agent.reload",
    "timeline": "agent.timeline",
    "last_reply": "agent.get",
}
"""Each port method → the ``/ws`` method whose access it has (``ensure_session`` is the part
of ``agent.reload`` that starts a session; ``last_reply`` is what ``agent.get`` shows)."""

AGENTS_STREAM = "agents"
"""The stream whose read access observing needs (the record changes of every agent)."""

PLUGIN_ONLY_FIELDS = frozenset({"worktree", "env", "recordFields"})
"""``AgentCreate`` fields ``agent.create`` does not take (a test keeps this the difference)."""


class CallGate(Protocol):
    """What this port needs of its session (:class:`paseo.rpc.session.Session` implements it)."""

    @property
    def allowed(self) -> frozenset[str]:
        """The methods the session's kind may call."""

    @property
    def kind(self) -> str: ...

    def admit_port_call(self) -> PaseoError | None:
        """The error a call now would be answered with (shutdown, hello, rate, in flight),
        else ``None``, having counted the call as started."""

    def port_call_done(self) -> None:
        """A call :meth:`admit_port_call` admitted has finished."""

    def stream_access(self, name: str) -> frozenset[str] | None:
        """The kinds allowed on stream ``name`` (``None``: no such stream)."""


class SessionAgents(Agents):
    """See the module docstring: ``agents`` driven with ``gate``'s access."""

    def __init__(self, agents: Agents, gate: CallGate) -> None:
        self._agents = agents
        self._gate = gate
        self._subscriptions: builtins.list[_Held] = []
        self._closed = False

    def _check(self, method: str) -> None:
        wire = METHODS[method]
        if wire not in self._gate.allowed:
            raise AccessDenied(f"a {self._gate.kind} session may not call {wire}")

    async def _call(self, method: str, call: Callable[[], Awaitable[T]]) -> T:
        self._check(method)
        error = self._gate.admit_port_call()
        if error is not None:
            raise error
        try:
            return await call()
        finally:
            self._gate.port_call_done()

    # ------------------------------------------------------------------ control

    async def create(self, spec: AgentCreate) -> AgentRecord:
        given = sorted(name for name in PLUGIN_ONLY_FIELDS & spec.model_fields_set)
        if any(getattr(spec, name) for name in given):
            raise AccessDenied(
                f"a session's agent.create does not take {', '.join(given)}",
                data={"fields": given},
            )
        return await self._call("create", lambda: self._agents.create(spec))

    async def get(self, agent: str) -> AgentRecord:
        return await self._call("get", lambda: self._agents.get(agent))

    async def list(
        self,
        query: AgentQuery | None = None,
        *,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> AgentPage:
        return await self._call(
            "list", lambda: self._agents.list(query, cursor=cursor, limit=limit)
        )

    async def send(
        self,
        agent_id: str,
        text: str,
        *,
        message_id: str | None = None,
        images: Sequence[PromptImage] = (),
    ) -> SendResult:
        return await self._call(
            "send",
            lambda: self._agents.send(agent_id, text, message_id=message_id, images=images),
        )

    async def interrupt(self, agent_id: str) -> AgentRecord:
        return await self._call("interrupt", lambda: self._agents.interrupt(agent_id))

    async def stop(self, agent_id: str) -> AgentRecord:
        return await self._call("stop", lambda: self._agents.stop(agent_id))

    async def archive(self, agent_id: str, *, force: bool = False) -> AgentRecord:
        # ``agent.archive`` always closes the session, running or not: ``force`` is no more.
        return await self._call("archive", lambda: self._agents.archive(agent_id, force=force))

    async def restore(self, agent_id: str) -> AgentRecord:
        return await self._call("restore", lambda: self._agents.restore(agent_id))

    async def delete(self, agent_id: str) -> None:
        await self._call("delete", lambda: self._agents.delete(agent_id))

    async def pending_permissions(self, agent_id: str) -> builtins.list[PermissionRequest]:
        return await self._call(
            "pending_permissions", lambda: self._agents.pending_permissions(agent_id)
        )

    async def all_pending_permissions(self) -> dict[str, builtins.list[PermissionRequest]]:
        return await self._call("all_pending_permissions", self._agents.all_pending_permissions)

    async def answer_permission(
        self, agent_id: str, request_id: str, answer: PermissionAnswer
    ) -> AgentRecord:
        return await self._call(
            "answer_permission",
            lambda: self._agents.answer_permission(agent_id, request_id, answer),
        )

    async def set_mode(self, agent_id: str, mode_id: str) -> AgentRecord:
        return await self._call("set_mode", lambda: self._agents.set_mode(agent_id, mode_id))

    async def set_model(self, agent_id: str, model: str) -> AgentRecord:
        return await self._call("set_model", lambda: self._agents.set_model(agent_id, model))

    async def update(
        self,
        agent_id: str,
        *,
        title: str | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> AgentRecord:
        return await self._call(
            "update", lambda: self._agents.update(agent_id, title=title, labels=labels)
        )

    async def wait(self, agent_id: str, *, timeout: float) -> WaitResult:  # noqa: ASYNC109
        return await self._call("wait", lambda: self._agents.wait(agent_id, timeout=timeout))

    async def ensure_session(self, agent_id: str) -> AgentRecord:
        return await self._call("ensure_session", lambda: self._agents.ensure_session(agent_id))

    async def timeline(
        self, agent_id: str, *, after_seq: int | None = None, limit: int = 200
    ) -> TimelinePage:
        return await self._call(
            "timeline", lambda: self._agents.timeline(agent_id, after_seq=after_seq, limit=limit)
        )

    async def last_reply(self, agent_id: str) -> str | None:
        return await self._call("last_reply", lambda: self._agents.last_reply(agent_id))

    def add_session_contributor(
        self, contributor: SessionContributor, *, include_internal: bool = False
    ) -> Callable[[], None]:
        raise AccessDenied("a session may not add to the sessions of agents (plugins only)")

    # ------------------------------------------------------------------- events

    def subscribe(
        self,
        observer: AgentObserver,
        *,
        name: str,
        max_pending: int = 1024,
        include_internal: bool = False,
    ) -> Subscription:
        if include_internal:
            raise AccessDenied("a session does not observe the daemon's internal agents")
        access = self._gate.stream_access(AGENTS_STREAM)
        if access is None or self._gate.kind not in access:
            raise AccessDenied(f"a {self._gate.kind} session may not observe agents")
        if self._closed:
            raise AccessDenied("the session is closed")
        inner = self._agents.subscribe(observer, name=name, max_pending=max_pending)
        subscription = _Held(inner, self._subscriptions)
        self._subscriptions.append(subscription)
        return subscription

    @property
    def observing(self) -> bool:
        """A subscription is open: the session is in use, as one subscribed to a stream."""
        return bool(self._subscriptions)

    def close(self) -> None:
        """The session's connection ended: end its subscriptions (idempotent)."""
        self._closed = True
        for subscription in list(self._subscriptions):
            subscription.close()


class _Held:
    """A subscription the session holds until it is closed (by its owner or the session)."""

    def __init__(self, inner: Subscription, held: builtins.list[_Held]) -> None:
        self._inner = inner
        self._held = held

    def close(self) -> None:
        if self in self._held:
            self._held.remove(self)
        self._inner.close()
