"""The daemon's generic HTTP mount: one app per path, screened before the app sees a request,
reached at the first TCP listen address."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any, cast

import pytest
from paseo_hookspecs.transport import Admission, AdmissionPurpose, PeerFacts

from paseo.daemon.http_mounts import HttpMounts
from paseo.rpc.server import RpcServer


class Screen:
    """Stands in for the server's trust decision: refuses a foreign Host, as ``admit`` does."""

    def __init__(self) -> None:
        self.seen: list[tuple[PeerFacts, AdmissionPurpose]] = []

    async def admit(self, facts: PeerFacts, purpose: AdmissionPurpose) -> Admission:
        self.seen.append((facts, purpose))
        return Admission(403) if facts.hosts != ("127.0.0.1:1",) else Admission(200)


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


def _request(mounts: HttpMounts, path: str, host: str) -> list[MutableMapping[str, Any]]:
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    app = mounts.http_app(path)
    assert app is not None
    scope = {"type": "http", "path": path, "headers": [(b"host", host.encode())]}
    asyncio.run(app(scope, receive, send))
    return sent


def test_requests_are_screened_before_the_app() -> None:
    screen = Screen()
    mounts = HttpMounts(lambda: cast(RpcServer, screen), lambda: ["127.0.0.1:1"])
    mounts.mount_http("/hello", _app)
    assert _request(mounts, "/hello/x", "127.0.0.1:1")[-1]["body"] == b"hello"
    refused = _request(mounts, "/hello", "evil.example")
    assert refused[0]["status"] == 403
    assert b"hello" not in refused[-1]["body"]
    assert [purpose for _, purpose in screen.seen] == ["public", "public"]


def test_one_app_per_path_and_unmount() -> None:
    mounts = HttpMounts(lambda: None, list)
    unmount = mounts.mount_http("/hello", _app)
    with pytest.raises(ValueError, match="/hello"):
        mounts.mount_http("/hello/", _app)
    with pytest.raises(ValueError, match="/ws"):
        mounts.mount_http("/ws", _app)
    assert mounts.http_app("/hellox") is None
    unmount()
    assert mounts.http_app("/hello") is None


@pytest.mark.parametrize(
    ("listen", "url"),
    [
        (["unix:///tmp/p.sock", "0.0.0.0:6800"], "http://127.0.0.1:6800/m"),
        (["[::1]:7000"], "http://[::1]:7000/m"),
        (["unix:///tmp/p.sock"], None),
    ],
)
def test_the_url_is_the_first_tcp_listener(listen: list[str], url: str | None) -> None:
    assert HttpMounts(lambda: None, lambda: listen).http_url("/m") == url


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (None, None, (10.0, 30.0)),
        ("2", "3", (2.0, 3.0)),
        ("4", "1", (4.0, 4.0)),
        ("soon", "-1", (10.0, 30.0)),
    ],
)
def test_request_deadlines_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    head: str | None,
    body: str | None,
    expected: tuple[float, float],
) -> None:
    """``PASEO_HTTP_HEAD_TIMEOUT``/``PASEO_HTTP_BODY_TIMEOUT`` override the defaults (a test of
    the deadlines sets them short); nonsense is ignored and the body's deadline is never shorter
    than the head's, both counting from the request line."""
    from paseo_websocket.http_routes import HttpRoutes, request_timeouts

    for name, value in (("PASEO_HTTP_HEAD_TIMEOUT", head), ("PASEO_HTTP_BODY_TIMEOUT", body)):
        if value is not None:
            monkeypatch.setenv(name, value)
    assert request_timeouts() == expected
    assert HttpRoutes(lambda path: None).timeouts == expected
