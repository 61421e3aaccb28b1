"""HTTP routes and connection admission against the real daemon."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest
from helpers.daemon_rpc import LiveDaemon, hello, open_ws, rpc
from websockets.exceptions import InvalidStatus


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _refused(url: str, **kwargs: object) -> int:
    async def attempt() -> int:
        try:
            ws = await open_ws(url, **kwargs)  # type: ignore[arg-type]
        except InvalidStatus as exc:
            return exc.response.status_code
        await ws.close()
        return 101

    return asyncio.run(attempt())


def test_health_needs_no_auth(daemon: LiveDaemon) -> None:
    status, body = _get(f"{daemon.http}/api/health")
    assert status == 200
    data = json.loads(body)
    assert data["ok"] is True
    assert data["version"]


def test_status_needs_the_credential(daemon: LiveDaemon) -> None:
    status, body = _get(f"{daemon.http}/api/status")
    assert status == 401
    assert body == b"Unauthorized\n"  # says nothing about why
    status, _ = _get(f"{daemon.http}/api/status", {"Authorization": "Bearer wrong"})
    assert status == 401
    status, body = _get(
        f"{daemon.http}/api/status", {"Authorization": f"Bearer {daemon.credential}"}
    )
    assert status == 200
    data = json.loads(body)
    assert data["pid"] == daemon.pid
    assert data["listen"] == [daemon.url]
    assert "websocket" in data["plugins"]["loaded"]


def test_unknown_path_is_404(daemon: LiveDaemon) -> None:
    assert _get(f"{daemon.http}/nope")[0] == 404


def test_unauthenticated_and_wrong_token_are_refused(daemon: LiveDaemon) -> None:
    assert _refused(daemon.url, token=None) == 401
    assert _refused(daemon.url, token="not-the-credential") == 401


def test_local_credential_is_accepted_as_a_local_session(daemon: LiveDaemon) -> None:
    async def run() -> dict[str, object]:
        ws = await open_ws(daemon.url, daemon.credential)
        try:
            return await hello(ws)
        finally:
            await ws.close()

    result = asyncio.run(run())
    assert result["sessionKind"] == "local"
    assert "server.shutdown" in result["methods"]  # type: ignore[operator]


def test_bearer_subprotocol_is_accepted_for_browsers(daemon: LiveDaemon) -> None:
    async def run() -> str | None:
        ws = await open_ws(
            daemon.url, None, subprotocols=["paseo.v1", f"paseo.bearer.{daemon.credential}"]
        )
        try:
            await hello(ws)
            return ws.subprotocol
        finally:
            await ws.close()

    assert asyncio.run(run()) == "paseo.v1"


def _raw_upgrade(port: int, host: str, token: str) -> int:
    """The status of a WebSocket upgrade sent with exactly the ``Host`` given."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        request = (
            "GET /ws HTTP/1.1\r\n"
            f"Host: {host}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {token}\r\n\r\n"
        )
        sock.sendall(request.encode())
        return int(sock.recv(4096).split(b" ", 2)[1])


def test_forbidden_host_header_is_refused(daemon: LiveDaemon) -> None:
    status, _ = _get(f"{daemon.http}/api/health", {"Host": "evil.example.com"})
    assert status == 403
    assert _raw_upgrade(daemon.port, "evil.example", daemon.credential) == 403
    assert _raw_upgrade(daemon.port, f"localhost:{daemon.port}", daemon.credential) == 101


def test_disallowed_origin_is_refused(daemon: LiveDaemon) -> None:
    headers = {"Origin": "https://evil.example"}
    assert _refused(daemon.url, token=daemon.credential, headers=headers) == 403


def test_configured_origin_and_hostname_are_allowed(
    daemon_factory: Callable[..., LiveDaemon],
) -> None:
    live = daemon_factory(
        {"daemon": {"hostnames": ["paseo.test"], "cors": {"allowedOrigins": ["https://app.test"]}}}
    )
    headers = {"Origin": "https://app.test"}
    assert _refused(live.url, token=live.credential, headers=headers) == 101
    assert _raw_upgrade(live.port, "paseo.test", live.credential) == 101


def test_forwarded_remote_client_does_not_get_local_trust(daemon: LiveDaemon) -> None:
    # The peer is loopback, a trusted proxy by default; the client behind it is not local, so
    # the local credential alone does not admit it.
    headers = {"X-Forwarded-For": "203.0.113.9"}
    assert _refused(daemon.url, token=daemon.credential, headers=headers) == 401


def test_password_admits_a_remote_session_with_fewer_methods(
    daemon_factory: Callable[..., LiveDaemon], run_paseo
) -> None:
    run_paseo("daemon", "set-password", "--password-stdin", input="correct horse\n", check=True)
    live = daemon_factory()
    assert _refused(live.url, token="wrong password") == 401

    async def run() -> tuple[dict[str, object], dict[str, object]]:
        ws = await open_ws(live.url, "correct horse")
        try:
            result = await hello(ws)
            denied = await rpc(ws, 1, "server.shutdown", {})
            return result, denied
        finally:
            await ws.close()

    result, denied = asyncio.run(run())
    assert result["sessionKind"] == "remote"
    assert "server.shutdown" not in result["methods"]  # type: ignore[operator]
    assert denied["error"]["data"]["code"] == "access_denied"  # type: ignore[index]


@pytest.mark.parametrize("env_password", ["from-the-environment"])
def test_paseo_password_environment_is_hashed_at_start(
    daemon_factory: Callable[..., LiveDaemon], env_password: str
) -> None:
    live = daemon_factory(env={"PASEO_PASSWORD": env_password})
    assert _refused(live.url, token=env_password) == 101
    assert _refused(live.url, token="other") == 401
