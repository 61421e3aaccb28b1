"""A Git repository whose ``paseo.json`` defines a plain script and two services, a real daemon
over a temporary home, and the ``paseo`` CLI against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon

# A service: serves HTTP on $PASEO_PORT and writes its PASEO_* environment to a file first.
SERVICE = r"""
import http.server, json, os, sys
env = {k: v for k, v in os.environ.items() if k.startswith("PASEO_")}
with open(sys.argv[1], "w") as f:
    json.dump(env, f)
print("serving", os.environ["PASEO_PORT"], flush=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = (sys.argv[2] + " " + self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(os.environ["PASEO_PORT"])), H).serve_forever()
"""

# A WebSocket echo service on $PASEO_PORT (plain GETs answer "ws-http").
WS_SERVICE = r"""
import asyncio, os
from websockets.asyncio.server import serve
from websockets.http11 import Response
from websockets.datastructures import Headers

async def echo(ws):
    async for message in ws:
        await ws.send("echo:" + message)

def plain(connection, request):
    if request.headers.get("Upgrade", "").lower() != "websocket":
        return Response(200, "OK", Headers([("Content-Length", "7")]), b"ws-http")
    return None

async def main():
    async with serve(echo, "127.0.0.1", int(os.environ["PASEO_PORT"]), process_request=plain):
        await asyncio.Future()

asyncio.run(main())
"""


def git(cwd: Path | str, *args: str) -> str:
    result = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
    return result.stdout.strip()


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
    )
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def paseo_json(tmp: Path) -> dict[str, Any]:
    service = tmp / "service.py"
    service.write_text(SERVICE)
    ws_service = tmp / "ws_service.py"
    ws_service.write_text(WS_SERVICE)
    py = sys.executable
    return {
        "worktree": {"setup": "echo set-up > setup-ran.txt"},
        "scripts": {
            "hello": {"command": 'echo "hello from $PASEO_BRANCH_NAME in $(pwd)"; exit 3'},
            "api": {"type": "service", "command": f"{py} {service} api-env.json api"},
            "web-app": {"type": "service", "command": f"{py} {service} web-env.json web"},
            "echo_ws": {"type": "service", "command": f"{py} {ws_service}"},
            "broken": {"type": "service", "command": "echo oops; exit 4"},
        },
        "unknownKey": {"kept": True},
    }


@pytest.fixture
def repo(tmp_path: Path, git_env: None) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "paseo.json").write_text(json.dumps(paseo_json(tmp_path)))
    (repo / ".gitignore").write_text("*.json.tmp\nsetup-ran.txt\n*-env.json\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


@pytest.fixture
def daemon(paseo_home: Path, git_env: None) -> Iterator[LiveDaemon]:
    live = start_daemon(paseo_home)
    pids = [live.pid]
    try:
        yield live
    finally:
        stop_daemon(paseo_home)
        for pid in pids:
            kill_leftover(pid)
