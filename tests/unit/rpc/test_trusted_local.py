"""``RpcContext.trusted_local``: decided from what the server observed of the connection,
never from what the client said (``paseo hub connect`` and its kin rely on it)."""

from __future__ import annotations

import pytest
from paseo_hookspecs.transport import Observed, SessionLimits
from unit.rpc.harness import SessionHost

from paseo.rpc.session import CallContext, Session


def _ctx(kind: str, observed: Observed, client_type: str = "cli") -> CallContext:
    session = Session(
        SessionHost(),  # type: ignore[arg-type]
        kind=kind,
        channel=None,  # type: ignore[arg-type]
        observed=observed,
        limits=SessionLimits(),
    )
    session.client_type = client_type
    return CallContext(session)


UNIX = Observed("unix", True, None, None, None)
LOOPBACK = Observed("tcp", False, "127.0.0.1", "127.0.0.1", None)
LOOPBACK6 = Observed("tcp", False, "::1", "::1", None)


@pytest.mark.parametrize("observed", [UNIX, LOOPBACK, LOOPBACK6])
def test_a_local_session_on_this_machine_is_trusted(observed: Observed) -> None:
    assert _ctx("local", observed).trusted_local


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
    assert not _ctx(kind, observed, client_type="cli").trusted_local
