"""A session's agent port (``SessionHandle.agents``) lets its connection do what the same
session could do with ``agent.*`` frames and no more: the kind's allowlist (the real ``agent``
method group's access), hello, shutdown, the rate and in-flight bounds, ``agent.create``'s
fields only, the ``agents`` stream's access, and subscriptions that end with the connection."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from paseo_hookspecs.agents import AgentCreate, AgentObserver, BranchOff
from paseo_hookspecs.errors import AccessDenied, PaseoError
from paseo_hookspecs.transport import Observed, SessionLimits
from unit.rpc.harness import SessionHost

from paseo.agents.models import AgentCreateParams
from paseo.agents.rpc import method_groups
from paseo.rpc.dispatch import MethodTable
from paseo.rpc.session import Session
from paseo.rpc.session_agents import PLUGIN_ONLY_FIELDS
from paseo.services import ServiceRef


class Subscribed:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class Kernel:
    """The daemon's agents behind the session: records what reached them."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.subscriptions: list[Subscribed] = []
        self.release = asyncio.Event()
        self.release.set()

    async def get(self, agent: str) -> Any:
        self.calls.append(f"get {agent}")
        await self.release.wait()
        return agent

    async def all_pending_permissions(self) -> Any:
        self.calls.append("all pending")
        return {}

    async def create(self, spec: AgentCreate) -> Any:
        self.calls.append("create")
        return spec

    def subscribe(self, observer: AgentObserver, *, name: str, max_pending: int = 1024) -> Any:
        self.calls.append(f"subscribe {name}")
        subscription = Subscribed()
        self.subscriptions.append(subscription)
        return subscription


class Host(SessionHost):
    def __init__(self, kernel: Kernel, streams: dict[str, frozenset[str]]) -> None:
        methods = MethodTable()
        for group in method_groups(ServiceRef("agents")):
            methods.add_group(group, "kernel")
        super().__init__(methods)
        self.context = type("Context", (), {"agents": kernel})()
        self._streams = streams

    def stream_position(self, name: str) -> tuple[frozenset[str], int] | None:
        access = self._streams.get(name)
        return None if access is None else (access, 0)


class Channel:
    async def send(self, text: str) -> None:
        return None

    async def close(self, code: int, reason: str) -> None:
        return None


OWNER = frozenset({"local", "remote"})


def session(
    kind: str,
    kernel: Kernel,
    *,
    hello: bool = True,
    limits: SessionLimits | None = None,
    streams: dict[str, frozenset[str]] | None = None,
) -> tuple[Session, Host]:
    host = Host(kernel, {"agents": OWNER} if streams is None else streams)
    made = Session(
        host,
        kind=kind,
        channel=Channel(),
        observed=Observed("ts-tcp", False, "192.0.2.1", "192.0.2.1", None),
        limits=limits or SessionLimits(),
    )
    if hello:
        made.mark_hello("cid", "cli")
    return made, host


def codes(run: Any) -> str:
    try:
        asyncio.run(run)
    except PaseoError as exc:
        return exc.code
    return "ok"


def test_a_local_or_remote_session_drives_agents_and_a_hub_session_does_not() -> None:
    kernel = Kernel()
    for kind in ("local", "remote"):
        assert codes(session(kind, kernel)[0].agents.get("a1")) == "ok"
    assert kernel.calls == ["get a1", "get a1"]
    assert codes(session("remote", kernel)[0].agents.all_pending_permissions()) == "ok"
    assert kernel.calls == ["get a1", "get a1", "all pending"]
    hub = session("hub", kernel)[0].agents
    assert codes(hub.get("a1")) == "access_denied"
    assert codes(hub.all_pending_permissions()) == "access_denied"
    assert kernel.calls == ["get a1", "get a1", "all pending"]


def test_calls_are_admitted_as_frames_are() -> None:
    kernel = Kernel()
    early, _ = session("remote", kernel, hello=False)
    assert codes(early.agents.get("a1")) == "hello_required"
    stopping, host = session("remote", kernel)
    host.accepting = False
    assert codes(stopping.agents.get("a1")) == "shutting_down"
    gone, _ = session("remote", kernel)
    gone.connection_lost()
    assert codes(gone.agents.get("a1")) == "shutting_down"
    limited, _ = session("remote", kernel, limits=SessionLimits(rate_burst=2, rate_per_second=1))
    results = [codes(limited.agents.get("a1")) for _ in range(3)]
    assert results == ["ok", "ok", "rate_limited"]
    assert kernel.calls == ["get a1", "get a1"]


def test_a_port_call_in_flight_counts_against_the_sessions_bound() -> None:
    async def scenario() -> tuple[str, str]:
        kernel = Kernel()
        kernel.release.clear()
        busy, _ = session("remote", kernel, limits=SessionLimits(max_in_flight=1))
        first = asyncio.get_running_loop().create_task(busy.agents.get("a1"))
        await asyncio.sleep(0)
        try:
            await busy.agents.get("a2")
            second = "ok"
        except PaseoError as exc:
            second = exc.code
        kernel.release.set()
        await first
        await busy.agents.get("a3")
        return second, kernel.calls[-1]

    assert asyncio.run(scenario()) == ("rate_limited", "get a3")


def test_create_takes_only_what_agent_create_takes() -> None:
    kernel = Kernel()
    remote, _ = session("remote", kernel)
    for extra in (
        {"env": {"SECRET": "x"}},
        {"recordFields": {"owner": {"kind": "hub"}}},
        {"worktree": BranchOff(newBranch="b")},
    ):
        spec = AgentCreate(provider="claude", cwd="/tmp", **extra)  # type: ignore[arg-type]
        assert codes(remote.agents.create(spec)) == "access_denied"
    assert kernel.calls == []
    allowed = AgentCreate(provider="claude", cwd="/tmp", internal=True, labels={"a": "b"})
    assert codes(remote.agents.create(allowed)) == "ok"
    assert kernel.calls == ["create"]


def test_the_refused_create_fields_are_those_agent_create_lacks() -> None:
    assert set(AgentCreate.model_fields) - set(AgentCreateParams.model_fields) == (
        PLUGIN_ONLY_FIELDS
    )


def test_observing_needs_the_agents_stream_and_ends_with_the_connection() -> None:
    kernel = Kernel()
    remote, _ = session("remote", kernel)
    with pytest.raises(AccessDenied):
        remote.agents.subscribe(AgentObserver(), name="t", include_internal=True)
    own = remote.agents.subscribe(AgentObserver(), name="own")
    subscription = remote.agents.subscribe(AgentObserver(), name="tswire:cid")
    assert kernel.calls == ["subscribe own", "subscribe tswire:cid"]
    # An open subscription keeps the session from its idle close, as a stream's does.
    own.close()
    assert kernel.subscriptions[0].closed
    assert remote._agents is not None
    assert remote._agents.observing
    remote.connection_lost()
    assert kernel.subscriptions[1].closed
    assert not remote._agents.observing
    with pytest.raises(AccessDenied):
        remote.agents.subscribe(AgentObserver(), name="again")
    subscription.close()
    local_only, _ = session("remote", kernel, streams={"agents": frozenset({"local"})})
    with pytest.raises(AccessDenied):
        local_only.agents.subscribe(AgentObserver(), name="t")
    with pytest.raises(AccessDenied):
        session("hub", kernel)[0].agents.add_session_contributor(object())  # type: ignore[arg-type]
