"""Direct baselines for ``bench/agents_real.py``: Pi, OpenCode and the ACP programs (Copilot,
oh-my-pi) driven without the daemon, with the argv, environment and session settings their
providers use."""

from __future__ import annotations

import base64
import contextlib
import json
import queue
import secrets
import socket
import subprocess
import threading
import urllib.request
from pathlib import Path
from typing import Any

from helpers.agents_env import BIN_DIR, AgentProcess
from paseo_opencode.mapping import BUILT_IN_MODES, DEFAULT_MODE

TURN_TIMEOUT = 120.0


class DirectPi:
    """``pi --mode rpc`` over its JSON lines (the provider's argv for a default session)."""

    def __init__(self, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self.process = AgentProcess(
            [str(BIN_DIR / "pi"), "--mode", "rpc"], env=env, cwd=cwd, stderr_path=stderr
        )
        self.ids = iter(range(1, 1_000_000))
        self.request("get_state")

    def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        ident = f"bench-{next(self.ids)}"
        self.process.send({"id": ident, "type": kind, **fields})
        answer: dict[str, Any] = self.process.read_until(
            lambda m: m.get("type") == "response" and m.get("id") == ident,
            timeout=TURN_TIMEOUT,
            what=kind,
        )
        if not answer.get("success"):
            raise RuntimeError(f"pi {kind}: {answer.get('error')}")
        return answer

    def turn(self, text: str) -> int:
        seen = len(self.process.messages)
        self.request("prompt", message=text)
        self.process.read_until(
            lambda m: m.get("type") == "agent_end", timeout=TURN_TIMEOUT, what="agent_end"
        )
        return len(self.process.messages) - seen

    def close(self) -> None:
        self.process.close()


class DirectAcp:
    """An ACP agent over its stdio JSON-RPC: ``initialize`` and ``session/new`` as the ``acp``
    provider sends them, then ``session/prompt`` until its answer (the turn's end). A request
    from the agent (a permission, a file read) is refused: an instant reply makes none."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self.process = AgentProcess(argv, env=env, cwd=cwd, stderr_path=stderr)
        self.ids = iter(range(1, 1_000_000))
        self.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                },
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.session = self.request("session/new", {"cwd": str(cwd), "mcpServers": []})["sessionId"]

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = next(self.ids)
        self.process.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})

        def answered(message: dict[str, Any]) -> bool:
            if "method" in message and "id" in message:  # the agent asks: refuse
                self.process.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "not offered by the bench"},
                    }
                )
                return False
            return message.get("id") == ident and "method" not in message

        answer = self.process.read_until(answered, timeout=TURN_TIMEOUT, what=method)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result") or {}
        return result

    def turn(self, text: str) -> int:
        seen = len(self.process.messages)
        self.request(
            "session/prompt",
            {"sessionId": self.session, "prompt": [{"type": "text", "text": text}]},
        )
        return len(self.process.messages) - seen

    def close(self) -> None:
        self.process.close()


class DirectCopilot(DirectAcp):
    """``copilot --acp`` (the ``copilot`` provider's default command)."""

    def __init__(self, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        super().__init__([str(BIN_DIR / "copilot"), "--acp"], env, cwd, stderr)


class DirectOmp(DirectAcp):
    """``omp acp`` (the ``omp`` provider's default command, its default approval mode)."""

    def __init__(self, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        super().__init__([str(BIN_DIR / "omp"), "acp"], env, cwd, stderr)


class DirectOpenCode:
    """``opencode serve`` over HTTP + SSE: a session with the default mode's rules, then
    ``prompt_async`` until ``session.idle`` (what the provider does, without the daemon)."""

    def __init__(self, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        password = secrets.token_urlsafe(16)
        self.base = f"http://127.0.0.1:{port}"
        self.auth = "Basic " + base64.b64encode(f"opencode:{password}".encode()).decode()
        self.cwd = str(cwd)
        self._stderr = stderr.open("wb")
        self.server = subprocess.Popen(
            [str(BIN_DIR / "opencode"), "serve", "--hostname", "127.0.0.1", "--port", str(port)],
            env={**env, "OPENCODE_SERVER_PASSWORD": password},
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )
        assert self.server.stdout is not None
        for line in self.server.stdout:
            if b"listening on" in line:
                break
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._listen, daemon=True).start()
        self.events.get(timeout=TURN_TIMEOUT)  # server.connected
        mode = BUILT_IN_MODES[DEFAULT_MODE]
        created = self.call("POST", "/session", {"title": "bench", "permission": mode.rules})
        self.session = created["id"]
        self.agent = mode.agent

    def call(self, method: str, path: str, body: Any = None) -> Any:
        request = urllib.request.Request(
            f"{self.base}{path}?directory={self.cwd}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": self.auth, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=TURN_TIMEOUT) as answer:
            data = answer.read()
        return json.loads(data) if data.strip() else None

    def _listen(self) -> None:
        request = urllib.request.Request(
            f"{self.base}/event?directory={self.cwd}", headers={"Authorization": self.auth}
        )
        with contextlib.suppress(OSError), urllib.request.urlopen(request) as stream:
            for line in stream:
                if line.startswith(b"data:"):
                    self.events.put(json.loads(line[5:]))

    def turn(self, text: str) -> int:
        count = 0
        self.call(
            "POST",
            f"/session/{self.session}/prompt_async",
            {"parts": [{"type": "text", "text": text}], "agent": self.agent},
        )
        while True:
            event = self.events.get(timeout=TURN_TIMEOUT)
            count += 1
            props = event.get("properties") or {}
            if event.get("type") == "session.idle" and props.get("sessionID") == self.session:
                return count

    def close(self) -> None:
        self.server.terminate()
        try:
            self.server.wait(10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self._stderr.close()
