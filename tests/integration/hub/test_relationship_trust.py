"""``hub.relationship.*`` on the real daemon: answered for a trusted local session, refused with
``access_denied`` for a browser-origin session (an allowed Origin, the local credential) and
for a remote one (a password session behind a forwarded, non-loopback client address) — the
decision comes from what the server observed, not from the hello."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import (
    LiveDaemon,
    error_code,
    hello,
    kill_leftover,
    open_ws,
    rpc,
    start_daemon,
    stop_daemon,
)

PASSWORD = "correct horse battery"
ORIGIN = "https://app.test"
METHODS = {
    "hub.relationship.get_status": {},
    "hub.relationship.connect": {"url": "https://hub.example", "token": "t"},
    "hub.relationship.disconnect": {"force": True},
}


@pytest.fixture
def daemon(paseo_home: Path, run_paseo: Any) -> Iterator[LiveDaemon]:
    paseo_home.mkdir(parents=True, exist_ok=True)
    config = {"daemon": {"cors": {"allowedOrigins": [ORIGIN]}}}
    (paseo_home / "config.json").write_text(json.dumps(config))
    env = {"PASEO_HOME": str(paseo_home)}
    set_password = run_paseo(
        "daemon", "set-password", "--password-stdin", input=f"{PASSWORD}\n", env=env
    )
    assert set_password.returncode == 0, set_password.stderr
    live = start_daemon(paseo_home)
    try:
        yield live
    finally:
        stop_daemon(live.home)
        kill_leftover(live.pid)


def _session(
    live: LiveDaemon,
    token: str,
    headers: dict[str, str] | None = None,
    methods: tuple[str, ...] = tuple(METHODS),
) -> tuple[str, dict[str, Any]]:
    """The session kind the daemon gave, and its answer to each of ``methods``."""

    async def run() -> tuple[str, dict[str, Any]]:
        ws = await open_ws(live.url, token, headers=headers)
        try:
            kind = str((await hello(ws))["sessionKind"])
            answers = {}
            for number, method in enumerate(methods, start=1):
                answers[method] = await rpc(ws, number, method, METHODS[method])
            return kind, answers
        finally:
            await ws.close()

    return asyncio.run(asyncio.wait_for(run(), 60))


def test_only_a_trusted_local_session_manages_the_relationship(daemon: LiveDaemon) -> None:
    status = ("hub.relationship.get_status",)
    kind, local = _session(daemon, daemon.credential, methods=status)
    assert kind == "local"
    assert local["hub.relationship.get_status"]["result"]["state"] == "not_connected"

    kind, browser = _session(daemon, daemon.credential, {"Origin": ORIGIN})
    assert kind == "local"  # admitted with the local credential, yet from a browser page
    assert {m: error_code(a) for m, a in browser.items()} == dict.fromkeys(METHODS, "access_denied")

    kind, remote = _session(daemon, PASSWORD, {"X-Forwarded-For": "203.0.113.9"})
    assert kind == "remote"
    assert {m: error_code(a) for m, a in remote.items()} == dict.fromkeys(METHODS, "access_denied")
    # Nothing the refused sessions sent changed the relationship.
    _, again = _session(daemon, daemon.credential, methods=status)
    assert again["hub.relationship.get_status"]["result"]["state"] == "not_connected"
