"""A real daemon supervising the real agent programs, driven through the real ``paseo`` CLI.

How the environment is put together (every piece is loopback-only):

- The **daemon's environment is built from scratch** (``PATH``, ``LANG``, a private ``HOME``,
  ``PASEO_HOME``, ``PASEO_LISTEN=127.0.0.1:0``), so a developer's API keys never reach it, plus
  the :class:`~paseo.testing.fake_model.RefusingProxy` variables (``HTTPS_PROXY``/``HTTP_PROXY``/
  ``ALL_PROXY``, loopback exempt) so that anything the daemon or an agent tries to reach beyond
  127.0.0.1 is refused and recorded. A marker variable (:data:`RUN_MARKER`) lets the tests find
  every process the daemon ever started: agent processes inherit the daemon's environment.
- **Each program's own environment lives in ``config.json``** as ``agents.providers.<id>.env``
  (the hermetic envs of ``helpers.agents_env``: the fake's URL, a dummy key, a private home),
  with ``command`` pointing at the pinned binaries in ``tests/agents/node_modules/.bin``. That is
  how a user configures providers, it exercises the custom-provider path (``claude-acp`` and
  ``py-acp`` extend ``acp``), and one daemon can host several programs with different settings.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import acp_test_agent
from helpers.agents_env import agent_binary, claude_agent_acp_env, claude_code_env, codex_env

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

RUN_MARKER = "PASEO_E2E_DAEMON_RUN"
"""Set on the daemon (so on every agent process): finds what a test's daemon started."""

# Agent start-up loads ~400 MB native binaries: generous bounds for a loaded 2-core machine.
TURN_TIMEOUT = 90.0
CLI_TIMEOUT = 150.0

PERMISSION_MODES = {"claude": "default", "codex": "untrusted", "claude-acp": "default"}
"""The mode in which each provider asks before writing a file (see docs/testing.md)."""

MODEL_BACKED = frozenset({"claude", "codex", "claude-acp"})
"""Providers whose program talks to the fake model server (the Python ACP agent does not)."""


def provider_settings(provider: str, fake: FakeModelServer, root: Path) -> dict[str, Any]:
    """``agents.providers.<provider>`` for config.json: the pinned program and its hermetic
    environment under ``root/<provider>``. Skips when the program is not installed."""
    state = root / provider
    if provider == "claude":
        return {
            "command": [str(agent_binary("claude"))],
            # No retries: an HTTP error from the model fails the turn at once.
            "env": claude_code_env(fake.url, state, max_retries=0),
        }
    if provider == "codex":
        return {"command": [str(agent_binary("codex"))], "env": codex_env(fake.url, state)}
    if provider == "claude-acp":
        return {
            "extends": "acp",
            "label": "Claude ACP",
            "command": [str(agent_binary("claude-agent-acp"))],
            "env": claude_agent_acp_env(fake.url, state, max_retries=0),
        }
    if provider == "py-acp":
        pytest.importorskip("acp", reason="the agent-client-protocol SDK (test extra) is missing")
        return {
            "extends": "acp",
            "label": "Python ACP",
            "command": acp_test_agent.command(),
            "env": {acp_test_agent.STATE_DIR_VARIABLE: str(state / "acp-state")},
        }
    raise ValueError(provider)


def agent_processes(marker: str) -> list[psutil.Process]:
    """Live (non-zombie) processes whose environment carries ``RUN_MARKER=marker``."""
    found = []
    for process in psutil.process_iter():
        try:
            if (
                process.environ().get(RUN_MARKER) == marker
                and process.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(process)
        except (psutil.Error, OSError):
            continue  # gone meanwhile, or not ours to read
    return found


def processes_of_agents(agent_ids: set[str]) -> list[int]:
    """Pids of live processes carrying ``PASEO_AGENT_ID`` of one of ``agent_ids``."""
    found = []
    for process in psutil.process_iter():
        try:
            env = process.environ()
            if env.get("PASEO_AGENT_ID") in agent_ids and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process.pid)
        except (psutil.Error, OSError):
            continue
    return found


def poll(probe: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.1) -> Any:
    """Call ``probe`` until it returns something truthy (returned); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


class RealDaemon:
    """One daemon process, started and stopped with the real CLI, and the CLI to drive it."""

    def __init__(
        self,
        root: Path,
        proxy: RefusingProxy,
        *,
        paseo: tuple[str, ...] = (sys.executable, "-m", "paseo"),
    ) -> None:
        self.root = root
        self.paseo = paseo
        """The command the daemon and the CLI run as (another venv's ``bin/paseo`` for an
        install test: its own script, so no ``paseo`` package of the current directory is
        imported instead)."""
        self.home = root / "paseo-home"
        self.marker = uuid.uuid4().hex
        self.pid: int | None = None
        self.home.mkdir(parents=True, exist_ok=True)
        daemon_home = root / "daemon-home"
        daemon_home.mkdir(parents=True, exist_ok=True)
        self.env = {
            name: os.environ[name]
            # PYTHONPYCACHEPREFIX: the suite's shared bytecode cache (tests/conftest.py).
            for name in ("PATH", "LANG", "LC_ALL", "PYTHONPYCACHEPREFIX")
            if name in os.environ
        }
        self.env.update(
            {
                "HOME": str(daemon_home),
                "PASEO_HOME": str(self.home),
                "PASEO_LISTEN": "127.0.0.1:0",
                "PASEO_STRICT_PLUGINS": "1",
                RUN_MARKER: self.marker,
                **proxy.proxy_env(),
            }
        )

    def configure(self, providers: dict[str, dict[str, Any]]) -> None:
        """Write config.json with these ``agents.providers`` entries."""
        config = {"agents": {"providers": providers}}
        (self.home / "config.json").write_text(json.dumps(config, indent=2))

    def start(self, **extra_env: str) -> int:
        result = subprocess.run(
            [*self.paseo, "daemon", "start", "-o", "json"],
            env={**self.env, **extra_env},
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert result.returncode == 0, f"daemon start failed:\n{result.stdout}\n{result.stderr}"
        self.pid = int(json.loads(result.stdout)["pid"])
        return self.pid

    def kill(self) -> None:
        """SIGKILL the daemon (a crash) and wait until it is gone; its agents are left."""
        assert self.pid is not None
        pid, self.pid = self.pid, None
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

        def gone() -> bool:
            try:
                return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                return True

        poll(gone, timeout=15, what=f"the killed daemon {pid} to go")

    def stop(self) -> subprocess.CompletedProcess[str]:
        result = self.cli("daemon", "stop", "--timeout", "30", check=False)
        self.pid = None
        return result

    def cli(
        self, *args: str, check: bool = True, timeout: float = CLI_TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        """Run the real ``paseo`` command against this daemon."""
        result = subprocess.run(
            [*self.paseo, *args],
            env={**os.environ, "PASEO_HOME": str(self.home)},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"paseo {' '.join(args)} exited {result.returncode}\n"
                f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
            )
        return result

    def client(self) -> Any:
        """A connected :class:`paseo.client.SyncClient` (use as a context manager)."""
        from paseo.client import SyncClient

        return SyncClient(home=self.home, client_type="sdk")

    def processes(self) -> list[psutil.Process]:
        """Live processes this test's daemon started (the daemon included)."""
        return agent_processes(self.marker)

    def cleanup(self) -> None:
        """Stop the daemon if it runs, then kill anything of this run that is still alive."""
        if self.pid is not None:
            self.stop()
        for process in self.processes():
            with contextlib.suppress(psutil.Error):
                process.kill()


def timeline(client: Any, agent_id: str) -> list[dict[str, Any]]:
    """Every stored timeline entry of the agent, oldest first."""
    entries: list[dict[str, Any]] = []
    after = None
    while True:
        page = client.call("agent.timeline", {"agentId": agent_id, "after": after, "limit": 500})
        entries += page["entries"]
        if not page["hasMore"] or not page["entries"]:
            return entries
        after = {"epoch": page["entries"][-1]["epoch"], "seq": page["entries"][-1]["seq"]}


def item_type(entry: dict[str, Any]) -> str:
    """``timeline`` entries by their item type, the rest by their event type."""
    event = entry["event"]
    if event["type"] == "timeline":
        return str(event["item"]["type"])
    return str(event["type"])


def logs(daemon: RealDaemon, agent: str) -> list[dict[str, Any]]:
    """``paseo logs ID -o json``: the agent's whole timeline, one entry per line."""
    out = daemon.cli("logs", agent, "-o", "json").stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def last_turn(kinds: list[str]) -> list[str]:
    """The item/event types from the last ``user_message`` on."""
    return kinds[len(kinds) - 1 - kinds[::-1].index("user_message") :]


def interrupt_mid_stream(
    daemon: RealDaemon, fake: FakeModelServer | None, agent: str, title: str = "main"
) -> None:
    """Send a slow prompt, interrupt it once its answer streams, and check the run ended
    canceled; with ``fake``, also that the program really cut the model stream (the fake
    notices at its next chunk)."""
    with daemon.client() as client:
        sent = json.loads(
            daemon.cli("send", "--no-wait", "-o", "json", title, "[[slow:300]]").stdout
        )

        def streaming() -> bool:
            entries = timeline(client, agent)
            asked = max(
                i
                for i, e in enumerate(entries)
                if e["event"].get("item", {}).get("messageId") == sent["messageId"]
            )
            return any(item_type(e) == "assistant_message" for e in entries[asked:])

        poll(streaming, timeout=TURN_TIMEOUT, what="the slow stream to start")
        client.call("agent.interrupt", {"agentId": agent})
    daemon.cli("wait", title, "--timeout", f"{TURN_TIMEOUT:.0f}s")
    turn = last_turn([item_type(e) for e in logs(daemon, title)])
    assert "turn_canceled" in turn, turn
    assert "turn_completed" not in turn, turn
    if fake is not None:
        poll(
            lambda: any(
                r.outcome == "disconnected" for r in fake.model_requests() if "slow:300" in r.prompt
            ),
            timeout=15,
            what="the model stream to be cut",
        )


@pytest.fixture
def daemon(tmp_path: Path, proxy: RefusingProxy) -> Iterator[RealDaemon]:
    """A daemon (not started yet: configure it first); stopped and swept at teardown."""
    real = RealDaemon(tmp_path / "d", proxy)
    try:
        yield real
    finally:
        real.cleanup()
