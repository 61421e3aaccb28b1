"""Half-open requests to a mounted HTTP route (the MCP server) are bounded, on a real daemon.

A hostile client once held 64 requests to ``/mcp/agents`` open forever without a token, headers
never finished. The daemon's HTTP mount now closes a request whose headers (or body) do not
arrive in time and answers 503 to more than ``MAX_RECEIVING`` requests still arriving at once
(plugins/paseo_websocket/http_routes.py, docs/mcp.md).
"""

from __future__ import annotations

import selectors
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers.daemon_rpc import LiveDaemon
from paseo_mcp.plugin import state_dir
from paseo_mcp.tokens import CapabilityTokens
from paseo_websocket.http_routes import MAX_RECEIVING

HEAD_TIMEOUT = 5.0
BODY_TIMEOUT = 6.0
"""The daemon's request deadlines here (``PASEO_HTTP_HEAD_TIMEOUT``/``PASEO_HTTP_BODY_TIMEOUT``):
short, so the test does not wait out the 10 s and 30 s defaults, yet long enough that the held
connections are still receiving when the ones past the cap arrive on a loaded machine."""

CLOSE_WITHIN = BODY_TIMEOUT + 30
"""How long a test waits for the daemon to close a held request (bounded, generous)."""


def _connect(live: LiveDaemon, head: bytes) -> socket.socket:
    address = urlsplit(live.http)
    conn = socket.create_connection((address.hostname or "127.0.0.1", address.port or 80), 10)
    conn.sendall(head)
    return conn


STILL_OPEN = b"<still open>"


def _read_until_closed(conns: list[socket.socket], timeout: float) -> list[bytes]:
    """What the daemon sent on each connection before closing it, all read at once within one
    deadline; an answer ends with :data:`STILL_OPEN` when its connection was not closed."""
    deadline = time.monotonic() + timeout
    received = dict.fromkeys(conns, b"")
    open_ = set(conns)
    with selectors.DefaultSelector() as selector:
        for conn in conns:
            conn.setblocking(False)
            selector.register(conn, selectors.EVENT_READ)
        while open_ and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                conn = key.fileobj
                assert isinstance(conn, socket.socket)
                try:
                    chunk = conn.recv(4096)
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    received[conn] += chunk
                else:
                    open_.discard(conn)
                    selector.unregister(conn)
    return [received[conn] + (STILL_OPEN if conn in open_ else b"") for conn in conns]


@pytest.fixture
def agent_daemon(agent_daemon_factory: Callable[..., LiveDaemon]) -> LiveDaemon:
    return agent_daemon_factory(
        env={
            "PASEO_HTTP_HEAD_TIMEOUT": str(HEAD_TIMEOUT),
            "PASEO_HTTP_BODY_TIMEOUT": str(BODY_TIMEOUT),
        }
    )


def test_half_open_requests_are_closed_and_capped(
    agent_daemon: LiveDaemon, create_agent: Callable[..., dict[str, Any]]
) -> None:
    agent = create_agent()
    host = urlsplit(agent_daemon.http).netloc.encode()
    token = CapabilityTokens.load(state_dir(agent_daemon.home)).issue(agent["id"]).encode()
    # Headers never finished, and no token: what the hostile client sent.
    half_open = b"POST /mcp/agents HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: appl"
    # Headers complete with a valid token, the body never sent.
    no_body = (
        b"POST /mcp/agents?token=" + token + b" HTTP/1.1\r\nHost: " + host + b"\r\n"
        b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        b"Content-Length: 1000\r\n\r\n{"
    )
    held = [_connect(agent_daemon, no_body)]
    held += [_connect(agent_daemon, half_open) for _ in range(MAX_RECEIVING - 1)]
    try:
        # Past the cap, a request still arriving is answered at once.
        extra = [_connect(agent_daemon, half_open) for _ in range(MAX_RECEIVING)]
        answers = _read_until_closed(extra, 30)
        for conn in extra:
            conn.close()
        assert any(answer.startswith(b"HTTP/1.1 503") for answer in answers), answers[:3]
        # Every held request is closed by the daemon without an answer from the app.
        for answer in _read_until_closed(held, CLOSE_WITHIN):
            assert not answer.endswith(STILL_OPEN)
            assert b"HTTP/1.1 200" not in answer
    finally:
        for conn in held:
            conn.close()
    # The route serves again once they are gone.
    fresh = _connect(agent_daemon, b"POST /mcp/agents HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    try:
        (answer,) = _read_until_closed([fresh], 30)
        assert answer.startswith(b"HTTP/1.1 401")
    finally:
        fresh.close()
