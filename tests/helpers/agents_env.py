"""Hermetic environments for the real agent programs pinned in ``tests/agents/package.json``.

Each ``*_env`` function returns a complete environment (built from scratch, not inherited, so a
developer's API keys or proxy settings never leak in) that points one program at the fake model
server and gives it a private home under ``root``. :class:`AgentProcess` runs a program in its own
process group and exchanges newline-delimited JSON with it, with a timeout on every read.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import pytest

AGENTS_DIR = Path(__file__).resolve().parent.parent / "agents"
BIN_DIR = AGENTS_DIR / "node_modules" / ".bin"

# The model Codex is configured with: a slug it knows, so it looks nothing up.
CODEX_MODEL = "gpt-5.5"
# The variable the Codex provider config names in ``env_key``.
CODEX_KEY_VARIABLE = "PASEO_FAKE_OPENAI_KEY"
FAKE_KEY = "sk-fake-key-for-tests"

# Variables copied from the test process: enough to find node and the system tools, and the
# suite's bytecode cache for the ``paseo`` an agent's shell tool runs (tests/conftest.py).
_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "TERM", "SYSTEMROOT", "PYTHONPYCACHEPREFIX")


def agent_binary(name: str) -> Path:
    """``tests/agents/node_modules/.bin/<name>``; skips the test when the programs are missing."""
    path = BIN_DIR / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: run `npm ci` in {AGENTS_DIR}")
    return path


def _base_env(root: Path, proxy_env: Mapping[str, str] | None) -> dict[str, str]:
    home = root / "home"
    tmp = root / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env = {name: os.environ[name] for name in _PASSTHROUGH if name in os.environ}
    env.update({"HOME": str(home), "TMPDIR": str(tmp), "NO_COLOR": "1"})
    # A root-owned test machine: agents refuse their permission-bypass modes as root unless
    # told they are sandboxed. Harmless for non-root users.
    env["IS_SANDBOX"] = "1"
    if proxy_env:
        env.update(proxy_env)
    return env


def claude_code_env(
    fake_url: str,
    root: Path,
    *,
    proxy_env: Mapping[str, str] | None = None,
    max_retries: int | None = None,
) -> dict[str, str]:
    """Environment for ``claude`` against the fake Anthropic API; ``HOME`` is ``root/home``.

    Transcripts land in ``$HOME/.claude/projects/<cwd with / as ->/<session>.jsonl``. Pass
    ``max_retries=0`` for error tests (the default retries HTTP errors with back-off).
    """
    env = _base_env(root, proxy_env)
    env.update(
        {
            "ANTHROPIC_BASE_URL": fake_url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        }
    )
    if max_retries is not None:
        env["CLAUDE_CODE_MAX_RETRIES"] = str(max_retries)
    return env


def claude_agent_acp_env(
    fake_url: str,
    root: Path,
    *,
    proxy_env: Mapping[str, str] | None = None,
    max_retries: int | None = None,
) -> dict[str, str]:
    """Environment for ``claude-agent-acp``: Claude Code's, plus the pinned CLI.

    The ACP adapter's SDK bundles its own Claude CLI of another version;
    ``CLAUDE_CODE_EXECUTABLE`` makes it run the one pinned here instead.
    """
    env = claude_code_env(fake_url, root, proxy_env=proxy_env, max_retries=max_retries)
    env["CLAUDE_CODE_EXECUTABLE"] = str(agent_binary("claude"))
    return env


def codex_config(fake_openai_url: str) -> str:
    """``config.toml`` for a private ``CODEX_HOME``: the fake as the only model provider."""
    return f"""\
model = "{CODEX_MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake model server"
base_url = "{fake_openai_url}"
wire_api = "responses"
env_key = "{CODEX_KEY_VARIABLE}"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
api_key_model_discovery = false
"""


def codex_env(
    fake_url: str,
    root: Path,
    *,
    proxy_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Environment for ``codex`` with ``CODEX_HOME=root/codex-home`` holding :func:`codex_config`.

    ``fake_url`` is the fake's base URL without ``/v1``.
    """
    env = _base_env(root, proxy_env)
    codex_home = root / "codex-home"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(f"{fake_url}/v1"))
    env.update({"CODEX_HOME": str(codex_home), CODEX_KEY_VARIABLE: FAKE_KEY})
    return env


class AgentProcess:
    """A real agent program speaking JSON lines on stdio, in its own process group.

    A reader thread queues every stdout line parsed as JSON (non-JSON lines are kept in
    :attr:`noise`); stderr goes to a file so a failing test can show it. :meth:`close` kills
    the whole group: the npm launchers are Node wrappers around native binaries, and killing
    only the wrapper would orphan the real program.
    """

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str],
        cwd: Path,
        stderr_path: Path,
    ) -> None:
        self.stderr_path = stderr_path
        self._stderr = stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [str(a) for a in argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
        self.messages: list[dict[str, Any]] = []
        self.noise: list[str] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.noise.append(line)
                continue
            if isinstance(message, dict):
                self._queue.put(message)
            else:
                self.noise.append(line)
        self._queue.put(None)

    def send(self, message: Mapping[str, Any]) -> None:
        """Write one JSON line to the program's stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        """Close stdin (most programs then exit on their own)."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()

    def read_until(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        timeout: float = 30.0,
        what: str = "a matching message",
    ) -> dict[str, Any]:
        """Return the next message matching ``predicate``; every message seen is kept in
        :attr:`messages`. Fails after ``timeout`` seconds or when stdout ends."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._fail(f"timed out after {timeout:.0f}s waiting for {what}")
            try:
                message = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if message is None:
                self._queue.put(None)
                self._fail(f"stdout closed while waiting for {what}")
            self.messages.append(message)
            if predicate(message):
                return message

    def _fail(self, reason: str) -> NoReturn:
        tail = [json.dumps(m)[:300] for m in self.messages[-15:]]
        raise AssertionError(
            f"{reason}\nexit code: {self.proc.poll()}\nlast messages:\n"
            + "\n".join(tail)
            + f"\nstderr:\n{self.stderr_tail()}"
        )

    def stderr_tail(self, limit: int = 4000) -> str:
        """The end of the program's stderr so far."""
        self._stderr.flush()
        with contextlib.suppress(OSError):
            return self.stderr_path.read_bytes()[-limit:].decode("utf-8", "replace")
        return ""

    def wait(self, timeout: float = 15.0) -> int:
        """Wait for the program to exit and return its exit code."""
        return self.proc.wait(timeout)

    def close(self) -> None:
        """Close stdin, then SIGTERM and, after a bounded wait, SIGKILL the process group."""
        self.close_stdin()
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        # The group may outlive its leader (children still running); make sure it is gone.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._reader.join(5)
        self._stderr.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The model Copilot is told to use under bring-your-own-key (any id: the fake answers all).
COPILOT_MODEL = "gpt-4.1"
# The model omp is configured with, as ``<provider>/<id>`` of its models.yml.
OMP_MODEL = "fake/fake-claude"


def copilot_env(
    fake_url: str, root: Path, *, proxy_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment for ``copilot --acp`` with a bring-your-own-key provider: the fake's OpenAI
    Chat Completions API, offline, with ``COPILOT_HOME=root/copilot-home``."""
    env = _base_env(root, proxy_env)
    env.update(
        {
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_HOME": str(root / "copilot-home"),
            "COPILOT_PROVIDER_BASE_URL": f"{fake_url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": FAKE_KEY,
            "COPILOT_MODEL": COPILOT_MODEL,
        }
    )
    return env


def omp_env(
    fake_url: str, root: Path, *, proxy_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment for ``omp acp``: ``$HOME/.omp/agent`` holds a models.yml naming the fake's
    Anthropic API and a config.yml making it the default model; ``bun`` (omp's runtime) is on
    ``PATH``."""
    env = _base_env(root, proxy_env)
    agent_dir = Path(env["HOME"]) / ".omp" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider, _, model = OMP_MODEL.partition("/")
    (agent_dir / "models.yml").write_text(
        f"providers:\n  {provider}:\n    baseUrl: {fake_url}\n    api: anthropic-messages\n"
        f"    apiKey: {FAKE_KEY}\n    models:\n      - id: {model}\n        name: Fake Claude\n"
    )
    (agent_dir / "config.yml").write_text(f"modelRoles:\n  default: {OMP_MODEL}\n")
    agent_binary("bun")
    env["PATH"] = f"{BIN_DIR}{os.pathsep}{env.get('PATH', os.defpath)}"
    return env


OMP_START_UP_HOSTS = frozenset(
    {
        "catalog.stencil.so",
        "coding-intl.dashscope.aliyuncs.com",
        "hyper.charm.land",
        "api.commandcode.ai",
        "api.kilo.ai",
        "api.venice.ai",
        "zenmux.ai",
    }
)
"""The public model catalogues omp 18.2.3 tries at every start-up (no setting turns this off);
the refusing proxy refuses them and the session works without."""


def codex_acp_env(
    fake_url: str, root: Path, *, proxy_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment for ``codex-acp`` (``@zed-industries/codex-acp``): Codex's, with a sandbox it
    can run (it ships no bubblewrap) and the approval policy under which it asks."""
    env = codex_env(fake_url, root, proxy_env=proxy_env)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    settings = 'sandbox_mode = "danger-full-access"\napproval_policy = "untrusted"\n'
    config.write_text(settings + config.read_text())
    return env
