"""The TypeScript protocol against a real daemon process, with no agent program: discovery,
the handshake and its close codes, trust on the socket and on TCP, correlation, errors, and
each stateless message. Every frame received is validated against the strict models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.daemon.harness import RealDaemon
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import MAX_DETACHED, TsDaemon
from websockets.exceptions import ConnectionClosed, InvalidStatus

from paseo.testing.fake_model import RefusingProxy

pytestmark = pytest.mark.e2e


def closed_with(client: TsClient) -> int | None:
    """Read until the daemon closes the connection; the close code it sent."""
    while True:
        try:
            client.receive(timeout=10)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None


def test_paseo_pid_points_the_typescript_cli_at_the_socket(ts_daemon: TsDaemon) -> None:
    info = json.loads((ts_daemon.home / "paseo.pid").read_text())
    # The TypeScript CLI reads `listen` and uses it when it names a socket.
    assert info["listen"] == ts_daemon.socket_path
    assert info["rpcListen"].startswith("127.0.0.1:")
    # This daemon's own CLI still finds its JSON-RPC address.
    assert ts_daemon.cli("daemon", "status").returncode == 0
    assert json.loads(ts_daemon.cli("ls", "-o", "json").stdout) == []
    mode = (ts_daemon.home / "paseo-ts.sock").stat().st_mode & 0o777
    assert mode == 0o600


def test_hello_answers_server_info_and_pings(ts_daemon: TsDaemon) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        info = client.hello("cid_protocol")
        server_id = (ts_daemon.home / "server-id").read_text().strip()
        assert info["serverId"] == server_id
        assert info["features"] == {"providersSnapshot": True}
        assert info["version"]
        client.send({"type": "ping"})
        assert client.receive() == {"type": "pong"}
        pong = client.request("ping", "pong", clientSentAt=1234)
        assert pong["clientSentAt"] == 1234
        assert pong["serverSentAt"] >= pong["serverReceivedAt"] > 0


@pytest.mark.parametrize(
    ("first", "code"),
    [
        ({"type": "session", "message": {"type": "fetch_agents_request", "requestId": "r"}}, 4002),
        ({"type": "hello", "clientId": "c", "clientType": "cli", "protocolVersion": 2}, 4003),
        ({"type": "hello", "clientId": "", "clientType": "cli", "protocolVersion": 1}, 4002),
    ],
)
def test_a_bad_first_frame_closes_with_its_code(
    ts_daemon: TsDaemon, first: dict[str, object], code: int
) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.send(first)
        assert closed_with(client) == code


def test_no_hello_closes_4001_and_a_second_hello_4002(ts_daemon: TsDaemon) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        assert closed_with(client) == 4001
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello("cid_twice")
        client.send(
            {"type": "hello", "clientId": "cid_twice", "clientType": "cli", "protocolVersion": 1}
        )
        assert closed_with(client) == 4002


def test_a_live_session_is_not_taken_over_by_its_client_id(ts_daemon: TsDaemon) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as first:
        first.hello("cid_owned")
        first.request("ping", "pong", clientSentAt=1)
        # The TypeScript CLI names one clientId for all its invocations: a second connection
        # naming the live session's clientId (`chat post` while `chat wait` runs) is served,
        # with a session of its own that hears none of the first client's answers.
        with TsClient(socket_path=ts_daemon.socket_path) as second:
            assert second.hello("cid_owned")["serverId"]
            assert second.request("ping", "pong", clientSentAt=2)["clientSentAt"] == 2
            pong = first.request("ping", "pong", clientSentAt=7)
            assert pong["clientSentAt"] == 7
            assert [m["payload"]["clientSentAt"] for m in second.messages("pong")] == [2]
        # The first client still gets its own answers, and only those.
        assert first.request("ping", "pong", clientSentAt=8)["clientSentAt"] == 8
        assert [m["payload"]["clientSentAt"] for m in first.messages("pong")] == [1, 7, 8]
    # Once its connection is gone, the session reattaches.
    with TsClient(socket_path=ts_daemon.socket_path) as again:
        assert again.hello("cid_owned")["serverId"]
        assert again.request("ping", "pong", clientSentAt=9)["clientSentAt"] == 9


def _open_sessions(daemon: TsDaemon) -> int:
    status = json.loads(daemon.cli("daemon", "status", "-o", "json").stdout)
    return int(status["counts"]["connections"])


def test_detached_sessions_are_capped_oldest_first(ts_daemon: TsDaemon) -> None:
    for n in range(MAX_DETACHED + 16):
        with TsClient(socket_path=ts_daemon.socket_path) as client:
            client.hello(f"cid_drop_{n}")
    # Sessions are dropped as their connections close; the status call is the CLI's own.
    assert _open_sessions(ts_daemon) <= MAX_DETACHED + 1
    # The newest is still kept for a reattach, the oldest is not: a reattach of the newest
    # keeps the count, a hello from the oldest opens a new session (dropping another).
    before = _open_sessions(ts_daemon)
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello(f"cid_drop_{MAX_DETACHED + 15}")
        assert _open_sessions(ts_daemon) == before


def test_tcp_needs_a_credential_and_screens_origins(ts_daemon: TsDaemon) -> None:
    # No token: accepted, then closed 4401, as the TypeScript clients expect.
    with TsClient(uri=ts_daemon.tcp_uri) as client:
        assert closed_with(client) == 4401
    with TsClient(uri=ts_daemon.tcp_uri, subprotocols=["paseo.bearer.wrong"]) as client:
        assert closed_with(client) == 4401
    # The bearer subprotocol is echoed (the Node client fails the handshake otherwise).
    token = ts_daemon.local_credential()
    with TsClient(uri=ts_daemon.tcp_uri, subprotocols=[f"paseo.bearer.{token}"]) as client:
        assert client.ws.subprotocol == f"paseo.bearer.{token}"
        assert client.hello("cid_tcp")["serverId"]
    # A browser Origin that is not allowed is refused before the upgrade.
    with pytest.raises(InvalidStatus) as refused:
        TsClient(
            uri=ts_daemon.tcp_uri,
            subprotocols=[f"paseo.bearer.{token}"],
            headers={"Origin": "https://evil.example"},
        )
    assert refused.value.response.status_code == 403


def test_unsupported_and_invalid_requests_are_answered(ts_daemon: TsDaemon) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello("cid_errors")
        # A type no client sends (every one the app sends is being served, one panel at a
        # time: the git panel's checkout_status_request was this example until it was).
        unknown = client.request("no_such_request", "no_such_response")
        assert unknown["__type"] == "rpc_error"
        assert unknown["code"] == "unknown_schema"
        assert unknown["requestType"] == "no_such_request"
        served = client.request("checkout_status_request", "checkout_status_response", cwd="/")
        assert (served["isGit"], served["error"]["code"]) == (False, "NOT_ALLOWED")
        invalid = client.request("fetch_agent_request", "fetch_agent_response")
        assert (invalid["__type"], invalid["code"]) == ("rpc_error", "invalid_message")
        missing = client.request("fetch_agent_request", "fetch_agent_response", agentId="nobody")
        assert missing["agent"] is None
        assert "nobody" in missing["error"]
        failing = client.request(
            "send_agent_message_request", "send_agent_message_response", agentId="nobody", text="hi"
        )
        assert failing["accepted"] is False


def test_stateless_messages(ts_daemon: TsDaemon) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello("cid_stateless")
        listed = client.request("fetch_agents_request", "fetch_agents_response", page={"limit": 50})
        assert listed["entries"] == []
        assert listed["pageInfo"] == {"nextCursor": None, "prevCursor": None, "hasMore": False}
        snapshot = client.request(
            "get_providers_snapshot_request", "get_providers_snapshot_response"
        )
        providers = {e["provider"]: e for e in snapshot["entries"]}
        assert "claude" in providers
        assert providers["claude"]["status"] in ("ready", "loading", "error", "unavailable")
        refreshed = client.request(
            "refresh_providers_snapshot_request", "refresh_providers_snapshot_response"
        )
        assert refreshed["acknowledged"] is True
        client.wait_for(lambda m: m["type"] == "providers_snapshot_update")
        available = client.request(
            "list_available_providers_request", "list_available_providers_response"
        )
        assert {p["provider"] for p in available["providers"]} == set(providers)
        # Presence messages have no reply; nothing comes back but what is asked next.
        client.session(
            {
                "type": "client_heartbeat",
                "deviceType": "web",
                "focusedAgentId": None,
                "lastActivityAt": "2026-12-01T00:00:00.000Z",
                "appVisible": True,
            }
        )
        client.session({"type": "register_push_token", "token": "ExponentPushToken[tswire-test]"})
        assert client.request("ping", "pong")["__type"] == "pong"
        assert client.messages("rpc_error") == []
        models = client.request(
            "list_provider_models_request", "list_provider_models_response", provider="no-such"
        )
        assert models["error"]
        worktrees = client.request("paseo_worktree_list_request", "paseo_worktree_list_response")
        assert (worktrees["worktrees"], worktrees["error"]) == ([], None)
        archive = client.request(
            "paseo_worktree_archive_request",
            "paseo_worktree_archive_response",
            worktreePath="/nowhere",
        )
        assert archive["success"] is False
        imported = client.request(
            "import_agent_request",
            ("status", "agent_create_failed", "agent_resumed"),
            provider="claude",
            sessionId="s",
        )
        assert (imported["status"], imported["errorCode"]) == (
            "agent_create_failed",
            "invalid_params",
        )
        # Through agent.import: a conversation the program does not know is refused.
        imported = client.request(
            "import_agent_request",
            ("status", "agent_create_failed", "agent_resumed"),
            provider="claude",
            sessionId="s",
            cwd="/",
        )
        assert imported["status"] == "agent_create_failed"
        assert imported["errorCode"] != "invalid_params"
        timeline = client.request(
            "fetch_agent_timeline_request",
            "fetch_agent_timeline_response",
            agentId="nobody",
            direction="tail",
        )
        assert timeline["error"]


def test_workspaces_sidebar(ts_daemon: TsDaemon, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello("cid_sidebar", client_type="mobile")
        first = client.request(
            "fetch_workspaces_request",
            "fetch_workspaces_response",
            subscribe={},
            sort=[{"key": "activity_at", "direction": "desc"}],
            page={"limit": 50},
        )
        assert first["subscriptionId"]
        opened = client.request("open_project_request", "open_project_response", cwd=str(project))
        assert opened["error"] is None
        workspace = opened["workspace"]
        assert (workspace["workspaceDirectory"], workspace["status"]) == (str(project), "done")
        assert workspace["projectKind"] == "non_git"
        assert workspace["project"]["checkout"]["isGit"] is False
        pushed = client.wait_for(lambda m: m["type"] == "workspace_update")
        assert pushed["payload"]["workspace"]["id"] == workspace["id"]
        listed = client.request(
            "fetch_workspaces_request",
            "fetch_workspaces_response",
            filter={"idPrefix": workspace["id"]},
        )
        assert [w["id"] for w in listed["entries"]] == [workspace["id"]]
        archived = client.request(
            "archive_workspace_request", "archive_workspace_response", workspaceId=workspace["id"]
        )
        assert (archived["error"], bool(archived["archivedAt"])) == (None, True)
        removed = client.wait_for(
            lambda m: m["type"] == "workspace_update" and m["payload"]["kind"] == "remove"
        )
        assert removed["payload"]["id"] == workspace["id"]
        history = client.request("fetch_agent_history_request", "fetch_agent_history_response")
        assert history["entries"] == []
        closed = client.request(
            "close_items_request", "close_items_response", agentIds=["nobody"], terminalIds=["none"]
        )
        assert (closed["agents"], closed["terminals"]) == (
            [],
            [{"terminalId": "none", "success": False}],
        )


def test_a_socket_path_too_long_is_skipped_not_fatal(tmp_path: Path, proxy: RefusingProxy) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    daemon = RealDaemon(deep, proxy)
    try:
        daemon.start()
        info = json.loads((daemon.home / "paseo.pid").read_text())
        assert info["listen"] == info["rpcListen"]
        assert not (daemon.home / "paseo-ts.sock").exists()
        log = (daemon.home / "daemon.log").read_text()
        assert "plugins.tswire.settings.socket" in log
        assert json.loads(daemon.cli("ls", "-o", "json").stdout) == []
    finally:
        daemon.cleanup()
