"""The kernel's ``HubHost.is_trusted_local``: decided from what the server observed of the
connection, never from what the client said."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_hookspecs.transport import Observed, SessionLimits

from paseo.daemon.hub_host import AgentTap, KernelHubHost
from paseo.rpc.dispatch import MethodTable
from paseo.rpc.session import CallContext, Session


class _Host:
    """The least a session needs of its server to exist (no call is made)."""

    methods = MethodTable()
    accepting = True
    context: Any = None

    def session_ended(self, session: Session) -> None:
        """Nothing to forget."""

    def stream_position(self, name: str) -> None:
        return None


class _Publisher:
    def register_stream(self, name: str, access: frozenset[str]) -> None:
        """Streams are not served here."""

    def publish(self, stream: str, method: str, payload: Any) -> None:
        """Nothing listens."""


def _host() -> KernelHubHost:
    # The agent control is not reached by the trust decision.
    return KernelHubHost(agents=None, public_key="")  # type: ignore[arg-type]


def _ctx(kind: str, observed: Observed, client_type: str = "cli") -> CallContext:
    session = Session(
        _Host(),
        kind=kind,
        channel=None,
        observed=observed,
        limits=SessionLimits(),  # type: ignore[arg-type]
    )
    session.client_type = client_type
    return CallContext(session)


UNIX = Observed("unix", True, None, None, None)
LOOPBACK = Observed("tcp", False, "127.0.0.1", "127.0.0.1", None)
LOOPBACK6 = Observed("tcp", False, "::1", "::1", None)


@pytest.mark.parametrize("observed", [UNIX, LOOPBACK, LOOPBACK6])
def test_a_local_session_on_this_machine_is_trusted(observed: Observed) -> None:
    assert _host().is_trusted_local(_ctx("local", observed))


@pytest.mark.parametrize(
    ("kind", "observed"),
    [
        ("remote", LOOPBACK),  # a remote credential, even from this machine
        ("local", Observed("tcp", False, "10.0.0.7", "10.0.0.7", None)),  # another machine
        ("local", Observed("tcp", False, "127.0.0.1", "127.0.0.1", "http://localhost:5173")),
        ("local", Observed("unix", True, None, None, "https://evil.example")),  # a browser
        ("hub", UNIX),
    ],
)
def test_remote_browser_and_hub_sessions_are_not(kind: str, observed: Observed) -> None:
    assert not _host().is_trusted_local(_ctx(kind, observed, client_type="cli"))


def test_a_context_the_server_did_not_make_is_not_trusted() -> None:
    class Forged:
        session_kind = "local"

    assert not _host().is_trusted_local(Forged())  # type: ignore[arg-type]


def test_the_tap_forwards_and_survives_a_failing_observer() -> None:
    seen: list[str] = []

    class Broken:
        def agent_event(self, agent_id: str, event: Any) -> None:
            raise RuntimeError("observer bug")

        def agent_updated(self, snapshot: Any) -> None:
            raise RuntimeError("observer bug")

    class Recording:
        def agent_event(self, agent_id: str, event: Any) -> None:
            seen.append(f"{agent_id}:{event['type']}")

        def agent_updated(self, snapshot: Any) -> None:
            seen.append(f"{snapshot.id}:{snapshot.status}:{snapshot.owner}")

    tap = AgentTap(_Publisher())
    tap.observers += [Broken(), Recording()]
    owner = {"kind": "daemon", "daemonId": "d", "executionId": "e"}
    record = {"id": "a1", "lastStatus": "running", "owner": owner}
    tap.publish("agents", "agent.created", {"agent": record})
    tap.publish(
        "agent:a1", "agent.event", {"agentId": "a1", "entry": {"event": {"type": "turn_started"}}}
    )
    tap.publish(
        "agents",
        "agent.updated",
        {"agent": {"id": "a2", "lastStatus": "idle", "owner": {"kind": "user"}}},
    )
    assert seen == [
        "a1:running:kind='daemon' daemonId='d' executionId='e'",
        "a1:turn_started",
        "a2:idle:None",
    ]
