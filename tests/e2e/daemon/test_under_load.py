"""Start-up and shutdown on a loaded machine (busy loops: a load average of ~5 on two cores).

- SIGTERM at any moment of a daemon's life leaves no ``local-credential`` or ``paseo.pid``:
  right after the credential is written (the loop does not handle signals yet; the default
  action used to kill the daemon there, leaving both behind), once it is ready, and for a
  detached daemon.
- A real Claude Code agent is offered the injected MCP server's tools (``mcp__paseo__*``) on
  its first turn: the daemon warms the server while the program starts and gives the program
  a connect timeout longer than a loaded machine's first answer.

Bounded: the loops stop by themselves after 90 s and are killed when the test ends; every wait
has a limit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings
from helpers.cpu_load import cpu_load
from helpers.foreground import spawn_foreground

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

META = ("local-credential", "paseo.pid", "paseo.pid.lock")


def _left(home: Path) -> list[str]:
    return [name for name in META if (home / name).exists()]


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _serving(home: Path) -> bool:
    """Whether the daemon records its listen address (written once its transports listen)."""
    try:
        return bool(json.loads((home / "paseo.pid").read_text()).get("rpcListen"))
    except (OSError, ValueError):
        return False


def _foreground_round(home: Path, when: str) -> None:
    process = spawn_foreground()
    try:
        if when == "start-up":
            poll(
                lambda: (home / "local-credential").exists() or process.poll() is not None,
                timeout=60,
                what="the daemon to write its credential",
            )
        else:
            poll(lambda: _serving(home) or process.poll() is not None, timeout=60, what="ready")
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    stderr = process.stderr.read() if process.stderr else ""
    assert code == 0, f"SIGTERM at {when}: exit {code}\n{stderr}"
    assert _left(home) == [], f"SIGTERM at {when} left {_left(home)}"
    assert "Traceback" not in stderr


def _detached_round(home: Path) -> None:
    started = subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "start", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    pid = int(json.loads(started.stdout)["pid"])
    os.kill(pid, signal.SIGTERM)
    try:
        poll(lambda: _gone(pid), timeout=60, what=f"the detached daemon {pid} to exit")
    finally:
        if not _gone(pid):
            os.killpg(pid, signal.SIGKILL)
    poll(lambda: not _left(home), timeout=10, what="the daemon's files to go")


def test_sigterm_under_load_leaves_no_credential_or_pid(paseo_home: Path) -> None:
    with cpu_load():
        for when in ("start-up", "ready", "start-up", "start-up", "ready"):
            _foreground_round(paseo_home, when)
        _detached_round(paseo_home)


def test_claude_code_is_offered_the_mcp_tools_under_load(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    settings = provider_settings("claude", fake, tmp_path / "programs")
    # Claude Code defers MCP tools behind ToolSearch by default: list them in the request.
    settings["env"]["ENABLE_TOOL_SEARCH"] = "false"
    daemon.configure({"claude": settings})
    work = tmp_path / "work"
    work.mkdir()
    with cpu_load():
        daemon.start()
        with daemon.client() as client:
            agent = client.call(
                "agent.create",
                {
                    "provider": "claude",
                    "cwd": str(work),
                    "title": "loaded",
                    "initialPrompt": "[[reply:under load]]",
                },
            )["agent"]
            client.call(
                "agent.wait",
                {"agentId": agent["id"], "timeout": TURN_TIMEOUT},
                timeout=TURN_TIMEOUT + 10,
            )
    turns = [r for r in fake.model_requests() if "[[reply:under load]]" in r.prompt]
    assert turns, [r.prompt for r in fake.model_requests()]
    offered = [name for name in turns[0].tool_names if name.startswith("mcp__paseo__")]
    assert "mcp__paseo__create_agent" in offered, turns[0].tool_names
