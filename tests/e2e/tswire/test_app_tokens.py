"""App tokens against the real daemon: a credential the app keeps across restarts. A token
created with ``paseo daemon token create`` is accepted by the TypeScript wire and by ``/ws``
as a remote session (what a password grants, never local authority), survives ``daemon
restart`` where the local credential does not, and is refused once revoked; a wrong secret
gets the TypeScript daemon's "Incorrect password", a missing one "Password required"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon
from paseo_hookspecs.errors import AccessDenied
from websockets.exceptions import ConnectionClosed

from paseo.client import SyncClient
from paseo.testing.fake_model import RefusingProxy

pytestmark = pytest.mark.e2e


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[TsDaemon]:
    with RefusingProxy() as proxy:
        started = TsDaemon(tmp_path, proxy)
        started.write_config()
        started.start()
        try:
            yield started
        finally:
            started.cleanup()


def _close(daemon: TsDaemon, token: str | None) -> tuple[int | None, str | None]:
    """The close code and reason of a TCP connection presenting ``token``."""
    protocols = [f"paseo.bearer.{token}"] if token is not None else None
    with TsClient(uri=daemon.tcp_uri, subprotocols=protocols) as client:
        while True:
            try:
                client.receive(timeout=10)
            except ConnectionClosed as closed:
                return (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, None)


def _ws_kind(daemon: TsDaemon, token: str) -> str:
    rpc = json.loads((daemon.home / "paseo.pid").read_text())["rpcListen"]
    with SyncClient(rpc, token=token, client_type="sdk", reconnect=False) as client:
        assert client.client.hello is not None
        return str(client.client.hello.sessionKind)


def test_an_app_token_survives_restarts_and_is_revocable(daemon: TsDaemon) -> None:
    created = json.loads(
        daemon.cli("daemon", "token", "create", "--name", "app", "-o", "json").stdout
    )
    token = created["token"]
    assert (daemon.home / "app-tokens.json").stat().st_mode & 0o777 == 0o600
    assert token not in (daemon.home / "app-tokens.json").read_text()
    listed = json.loads(daemon.cli("daemon", "token", "ls", "-o", "json").stdout)
    assert [t["id"] for t in listed] == [created["id"]]
    assert "token" not in listed[0]

    old_credential = daemon.local_credential()
    with TsClient(uri=daemon.tcp_uri, subprotocols=[f"paseo.bearer.{token}"]) as client:
        assert client.hello("cid_app", client_type="mobile")["serverId"]
    # A token grants a remote session, even from this machine, on both transports.
    assert _ws_kind(daemon, token) == "remote"

    daemon.stop()
    daemon.start()
    # The rotating local credential is refused after a restart; the token still works.
    assert _close(daemon, old_credential) == (4401, "Incorrect password")
    with TsClient(uri=daemon.tcp_uri, subprotocols=[f"paseo.bearer.{token}"]) as client:
        assert client.hello("cid_app", client_type="mobile")["serverId"]
        assert client.request("ping", "pong", clientSentAt=1)["clientSentAt"] == 1
    assert _ws_kind(daemon, token) == "remote"

    assert _close(daemon, None) == (4401, "Password required")
    assert _close(daemon, "paseo_app_not-a-token") == (4401, "Incorrect password")

    # Revoked while the daemon runs: the next connection with it is refused.
    daemon.cli("daemon", "token", "revoke", created["id"])
    assert _close(daemon, token) == (4401, "Incorrect password")
    with pytest.raises(AccessDenied):
        _ws_kind(daemon, token)
