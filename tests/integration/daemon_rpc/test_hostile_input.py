"""Hostile input against the real daemon: text that is not valid Unicode, remote sessions
reaching for the security settings."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from helpers.daemon_rpc import LiveDaemon, answer, error_code, hello, open_ws, rpc

LONE_SURROGATE_FRAMES = [
    # The id itself cannot be echoed: answered with a null id.
    ('{"jsonrpc":"2.0","id":"\\ud800","method":"x"}', None, "invalid_request"),
    ('{"jsonrpc":"2.0","id":7,"method":"x\\udfff"}', 7, "invalid_request"),
    (
        '{"jsonrpc":"2.0","id":8,"method":"project.add","params":{"path":"/tmp/p\\udc80"}}',
        8,
        "invalid_params",
    ),
    (
        '{"jsonrpc":"2.0","id":9,"method":"workspace.open","params":{"path":"/tmp/\\ud800w"}}',
        9,
        "invalid_params",
    ),
    (
        '{"jsonrpc":"2.0","id":10,"method":"config.patch",'
        '"params":{"patch":{"daemon":{"appendSystemPrompt":"\\udbff"}}}}',
        10,
        "invalid_params",
    ),
]


def test_lone_surrogates_get_error_answers_and_the_connection_lives(daemon: LiveDaemon) -> None:
    async def run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        ws = await open_ws(daemon.url, daemon.credential)
        try:
            await hello(ws)
            replies = []
            for frame, request_id, _ in LONE_SURROGATE_FRAMES:
                await ws.send(frame)
                replies.append(await answer(ws, request_id))
            return replies, await rpc(ws, 99, "server.ping", {"data": "still here"})
        finally:
            await ws.close()

    replies, ping = asyncio.run(run())
    assert [error_code(r) for r in replies] == [code for *_, code in LONE_SURROGATE_FRAMES]
    assert ping["result"]["data"] == "still here"
    log = (daemon.home / "daemon.log").read_text(errors="replace")
    assert "Traceback" not in log
    config = daemon.home / "config.json"
    assert not config.exists() or "appendSystemPrompt" not in config.read_text()


def _remote_daemon(
    daemon_factory: Callable[..., LiveDaemon], run_paseo: Callable[..., Any]
) -> LiveDaemon:
    run_paseo("daemon", "set-password", "--password-stdin", input="correct horse\n", check=True)
    return daemon_factory()


SECURITY_PATCHES = [
    ({"daemon": {"listen": "0.0.0.0:6767"}}, "daemon.listen"),
    ({"daemon": {"hostnames": True}}, "daemon.hostnames"),
    ({"daemon": {"cors": {"allowedOrigins": ["*"]}}}, "daemon.cors"),
    ({"daemon": {"trustedProxies": True}}, "daemon.trustedProxies"),
    ({"daemon": {"auth": {"password": None}}}, "daemon.auth"),
    ({"daemon": {"mcp": {"enabled": True}}}, "daemon.mcp"),
    # The MCP plugin's section is local-only (it widens what agents reach), at its new place.
    (
        {"plugins": {"mcp": {"settings": {"callerScope": "all"}}}},
        "plugins.mcp.settings.callerScope",
    ),
    ({"plugins": {"evil": {"source": "git+https://evil.example/x"}}}, "plugins.evil.source"),
    ({"plugins": {"evil": {"path": "/tmp/evil"}}}, "plugins.evil.path"),
]


def test_remote_sessions_may_not_touch_security_settings(
    daemon_factory: Callable[..., LiveDaemon], run_paseo: Callable[..., Any]
) -> None:
    live = _remote_daemon(daemon_factory, run_paseo)
    before = (live.home / "config.json").read_text()

    async def run() -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
        remote = await open_ws(live.url, "correct horse")
        local = await open_ws(live.url, live.credential)
        try:
            await hello(remote)
            await hello(local)
            denied = [
                await rpc(remote, i, "config.patch", {"patch": patch})
                for i, (patch, _) in enumerate(SECURITY_PATCHES, 1)
            ]
            # Other settings stay patchable remotely; security settings locally.
            allowed = await rpc(
                remote, 50, "config.patch", {"patch": {"daemon": {"appendSystemPrompt": "hi"}}}
            )
            local_ok = await rpc(
                local, 51, "config.patch", {"patch": {"daemon": {"hostnames": ["paseo.test"]}}}
            )
            return denied, allowed, local_ok
        finally:
            await remote.close()
            await local.close()

    denied, allowed, local_ok = asyncio.run(run())
    for reply, (_, path) in zip(denied, SECURITY_PATCHES, strict=True):
        assert error_code(reply) == "access_denied", reply
        assert path in reply["error"]["message"], reply
    assert "result" in allowed, allowed
    assert "result" in local_ok, local_ok
    after = json.loads((live.home / "config.json").read_text())
    assert after["daemon"]["hostnames"] == ["paseo.test"]
    assert after["daemon"]["auth"] == json.loads(before)["daemon"]["auth"]
    assert "plugins" not in after
