"""Notifications and redaction through the real daemon and a real Claude Code.

One agent, one turn: the fake model has Claude Code run a shell command (which needs
permission in the default mode) printing an Anthropic-shaped key and the value of a secret
variable of the daemon's environment. A webhook sink on a loopback server this test owns must
receive a signed POST when the agent asks for permission and when it finishes; the key and the
secret must then appear in no file under ``$PASEO_HOME``, in no ``paseo logs`` output and in no
webhook body, and the stored entries must say ``REDACTED`` instead.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

KEY_TAIL = "api03-E2eRedactionKeyAbcdefghijklmnop"
KEY = "sk-ant-" + KEY_TAIL
"""Printed by the tool. The prompt spells it ``sk-ant-""…`` (the shell joins the halves), so
only the tool's output holds the key itself."""
SECRET_VALUE = "e2e-daemon-secret-0123456789"
WAIT = f"{TURN_TIMEOUT:.0f}s"


class Hook:
    """A loopback HTTP server recording every POST (headers and body)."""

    def __init__(self) -> None:
        self.posts: list[tuple[dict[str, str], bytes]] = []
        lock = self.lock = threading.Lock()
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with lock:
                    posts.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(body) for _, body in self.posts]


@pytest.fixture
def hook() -> Iterator[Hook]:
    server = Hook()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
        server.thread.join(timeout=10)


def test_webhook_hears_permission_and_finish_and_secrets_stay_out(
    daemon: RealDaemon, fake: FakeModelServer, hook: Hook, tmp_path: Path
) -> None:
    secret_file = tmp_path / "hook-secret"
    config = {
        "agents": {"providers": {"claude": provider_settings("claude", fake, tmp_path / "p")}},
        "daemon": {
            "notifications": [
                {
                    "type": "webhook",
                    "name": "loopback",
                    "url": hook.url,
                    "events": ["finished", "permission"],
                    "secretFile": str(secret_file),
                    "backoff": 0.2,
                }
            ]
        },
    }
    (daemon.home / "config.json").write_text(json.dumps(config))
    daemon.start(E2E_SERVICE_TOKEN=SECRET_VALUE)
    assert secret_file.stat().st_mode & 0o777 == 0o600
    secret = secret_file.read_bytes().strip()
    work = tmp_path / "work"
    work.mkdir()

    command = f'echo sk-ant-""{KEY_TAIL} "$E2E_SERVICE_TOKEN"'
    daemon.cli(
        "run", "-d", "--provider", "claude", "--mode", "default", "--cwd", str(work),
        "--title", "leaky", f"[[shell:{command}]]",
    )  # fmt: skip
    poll(
        lambda: any(e["event"] == "permission" for e in hook.events()),
        timeout=TURN_TIMEOUT,
        what="the permission webhook",
    )
    daemon.cli("permit", "allow", "leaky")
    daemon.cli("wait", "leaky", "--timeout", WAIT)
    poll(
        lambda: any(e["event"] == "finished" for e in hook.events()),
        timeout=TURN_TIMEOUT,
        what="the finished webhook",
    )

    events = {e["event"]: e for e in hook.events()}
    agent = json.loads(daemon.cli("inspect", "leaky", "-o", "json").stdout)["agent"]["id"]
    for event in ("permission", "finished"):
        assert events[event]["agentId"] == agent
        assert events[event]["title"] == "leaky"
        assert events[event]["workspace"]["cwd"] == str(work)
    assert "Bash" in events["permission"]["summary"]
    assert "REDACTED" in events["finished"]["summary"]
    for headers, body in hook.posts:
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        assert headers["X-Paseo-Signature"] == expected

    # The tool really printed both: the model was sent them (the agent's input is untouched).
    assert any(KEY in r.body.decode("utf-8", "replace") for r in fake.model_requests())

    with daemon.client() as client:
        sink = client.call("notify.status", {})["sinks"][0]
    assert sink["name"] == "loopback"
    assert sink["sent"] >= 2
    assert sink["failed"] == sink["dropped"] == 0
    status = json.loads(daemon.cli("daemon", "status", "-o", "json").stdout)
    assert status["sections"]["notify"]["state"] == "ok", status["sections"]

    timeline_out = daemon.cli("logs", "leaky", "-o", "json").stdout
    daemon.stop()
    leaks = [KEY, SECRET_VALUE]
    assert not [s for s in leaks if s in timeline_out]
    assert "[REDACTED:anthropic]" in timeline_out
    assert "[REDACTED:env:E2E_SERVICE_TOKEN]" in timeline_out
    for _, body in hook.posts:
        assert not [s for s in leaks if s.encode() in body]
    for path in daemon.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [s for s in leaks if s.encode() in data], f"a secret is in {path}"
