"""Driving a real daemon in tests: start/stop it with the CLI, speak raw JSON-RPC to it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


@dataclass
class LiveDaemon:
    """A running daemon: where it listens and what a local client presents."""

    home: Path
    pid: int
    port: int
    url: str

    @property
    def credential(self) -> str:
        return (self.home / "local-credential").read_text().strip()

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, PASEO_HOME=str(home), PASEO_LISTEN="127.0.0.1:0")
    env.update(extra or {})
    return env


def start_daemon(home: Path, env: dict[str, str] | None = None) -> LiveDaemon:
    result = subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "start", "-o", "json"],
        env=_env(home, env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"start failed:\n{result.stdout}\n{result.stderr}"
    report = json.loads(result.stdout)
    url = report["listen"][0]
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    return LiveDaemon(home=home, pid=report["pid"], port=port, url=url)


def stop_daemon(home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "stop", "--force", "--timeout", "10"],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def kill_leftover(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def open_ws(
    url: str, token: str | None, *, headers: dict[str, str] | None = None, **options: Any
) -> ClientConnection:
    extra = dict(headers or {})
    if token is not None:
        extra["Authorization"] = f"Bearer {token}"
    return await connect(url, additional_headers=extra, open_timeout=10, **options)


async def rpc(ws: ClientConnection, request_id: int, method: str, params: Any = None) -> Any:
    """Send a request and return its answer (notifications in between are skipped)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    await ws.send(json.dumps(message))
    return await answer(ws, request_id)


async def answer(ws: ClientConnection, request_id: Any, within: float = 10.0) -> Any:
    async with asyncio.timeout(within):
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("id") == request_id and "method" not in frame:
                return frame


async def hello(ws: ClientConnection, client_id: str = "test") -> dict[str, Any]:
    reply = await rpc(ws, 0, "server.hello", {"clientId": client_id, "clientType": "cli"})
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def error_code(reply: dict[str, Any]) -> str:
    code: str = reply["error"]["data"]["code"]
    return code
