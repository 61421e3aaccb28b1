"""The fake Hub itself behaves as the reference describes (driven over real HTTP/WebSocket)."""

from __future__ import annotations

import asyncio
import json
import secrets
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
from helpers.hub_agents import run
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from paseo.testing.fake_hub import API_KEY, FakeHub, RequestLost
from paseo.testing.fake_hub.state import verifier


def _http(method: str, url: str, token: str | None, body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw else None


async def http(method: str, url: str, token: str | None, body: Any = None) -> tuple[int, Any]:
    return await asyncio.to_thread(_http, method, url, token, body)


def enroll_body(secret: str, **extra: Any) -> dict[str, Any]:
    return {
        "daemonId": str(uuid.uuid4()),
        "idempotencyKey": str(uuid.uuid4()),
        "serverId": "srv_x",
        "daemonPublicKey": "key",
        "credentialVerifier": verifier(secret),
        "hostname": "Studio Mac.local",
        **extra,
    }


async def enrolled(hub: FakeHub) -> tuple[str, str]:
    secret = secrets.token_urlsafe(32)
    body = enroll_body(secret)
    status, answer = await http("POST", f"{hub.url}/api/daemons/enroll", hub.issue_token(), body)
    assert status == 200
    return answer["daemonId"], secret


def headers(daemon_id: str, secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}", "X-Paseo-Daemon-Id": daemon_id}


def test_tokens_need_the_api_key() -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            url = f"{hub.url}/api/v1/daemons/enrollment-tokens"
            assert (await http("POST", url, "wrong"))[0] == 401
            status, answer = await http("POST", url, API_KEY)
            assert status == 201
            assert answer["token"] in hub.tokens

    run(body())


def test_enroll_is_strict_and_replays_idempotently() -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            url = f"{hub.url}/api/daemons/enroll"
            token = hub.issue_token()
            secret = secrets.token_urlsafe(32)
            request = enroll_body(secret)
            assert (await http("POST", url, token, {**request, "extra": 1}))[0] == 400
            assert (await http("POST", url, None, request))[0] == 401
            status, first = await http("POST", url, token, request)
            assert status == 200
            assert first == {
                "daemonId": request["daemonId"],
                "slug": "studio-mac-local",
                "scopes": ["hub.execution.*"],
                "webSocketUrl": f"ws://127.0.0.1:{hub.port}/api/daemons/socket",
            }
            assert await http("POST", url, token, request) == (200, first)
            rival = enroll_body(secrets.token_urlsafe(32))
            assert (await http("POST", url, token, rival))[0] == 401
            other = enroll_body(secrets.token_urlsafe(32))
            status, clash = await http("POST", url, hub.issue_token(), other)
            assert clash["slug"] == f"studio-mac-local-{other['daemonId'][:8]}"

    run(body())


def test_socket_checks_headers_and_replaces_older_sockets() -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            daemon_id, secret = await enrolled(hub)
            url = f"ws://127.0.0.1:{hub.port}/api/daemons/socket"
            with pytest.raises(InvalidStatus) as missing:
                await connect(url)
            assert missing.value.response.status_code == 401
            with pytest.raises(InvalidStatus) as wrong:
                await connect(url, additional_headers=headers(daemon_id, "nope"))
            assert wrong.value.response.status_code == 403
            first = await connect(url, additional_headers=headers(daemon_id, secret))
            await hub.wait_connected(daemon_id)
            second = await connect(url, additional_headers=headers(daemon_id, secret))
            await hub.wait_connected(daemon_id, after=1)
            with pytest.raises(ConnectionClosed):
                await first.recv()
            assert first.close_code == 4001
            assert first.close_reason == "replaced"
            await second.send("not json")
            with pytest.raises(ConnectionClosed):
                await second.recv()
            assert second.close_code == 4400

    run(body())


def test_live_creates_are_replayed_on_every_socket_and_unknown_messages_ignored() -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            daemon_id, secret = await enrolled(hub)
            url = f"ws://127.0.0.1:{hub.port}/api/daemons/socket"
            ws = await connect(url, additional_headers=headers(daemon_id, secret))
            await hub.wait_connected(daemon_id)
            create = asyncio.create_task(hub.create(daemon_id, prompt="p", cwd="/tmp"))
            first = json.loads(await ws.recv())["message"]
            await ws.send(json.dumps({"type": "session", "message": {"type": "whatever"}}))
            await ws.close()
            with pytest.raises(RequestLost):
                await create
            ws = await connect(url, additional_headers=headers(daemon_id, secret))
            replayed = json.loads(await ws.recv())["message"]
            assert replayed["type"] == "hub.execution.agent.create.request"
            assert replayed["executionId"] == first["executionId"]
            assert replayed["requestId"] != first["requestId"]
            assert hub.violations == ["whatever: unknown message type 'whatever'"]
            await ws.close()

    run(body())


def test_delete_revokes_with_4403_and_is_idempotent() -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            daemon_id, secret = await enrolled(hub)
            url = f"ws://127.0.0.1:{hub.port}/api/daemons/socket"
            ws = await connect(url, additional_headers=headers(daemon_id, secret))
            await hub.wait_connected(daemon_id)
            delete = f"{hub.url}/api/daemons/{daemon_id}"
            assert (await http("DELETE", delete, "wrong"))[0] == 401
            assert (await http("DELETE", delete, secret))[0] == 204
            with pytest.raises(ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 4403
            assert (await http("DELETE", delete, secret))[0] == 204
            with pytest.raises(InvalidStatus) as refused:
                await connect(url, additional_headers=headers(daemon_id, secret))
            assert refused.value.response.status_code == 403

    run(body())
