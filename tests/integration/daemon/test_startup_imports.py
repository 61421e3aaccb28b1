"""What an empty daemon's start does not import: code used only when a feature is first used
(speech engines, the MCP SDK and its tool handlers, plugins' MCP tools, the relay's tunnel, the
checkpoint plumbing, the scripts supervisor, the file explorer, the session's agent port, the
models and handlers of the method groups loaded on first call) stays out of the start
(docs/performance.md). Read from ``-X importtime`` of a real start, up to ready and stop, and
from ``sys.modules`` as the daemon exits (``-X importtime`` does not see
``importlib.import_module``, which loads the services' adapters)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

READY_TIMEOUT = 60.0

NOT_AT_START_PACKAGES = frozenset(
    {
        "faster_whisper",
        "ctranslate2",
        "sherpa_onnx",
        "onnxruntime",
        "numpy",
        "paseo_speech_local",
        "paseo_speech_openai",
        "mcp",
        "starlette",
    }
)
"""Top-level packages: the speech engines (none configured) and the MCP SDK (built on the
first MCP request or a session's warm-up)."""

NOT_AT_START_MODULES = frozenset(
    {
        "paseo_mcp.server",
        "paseo_mcp.handlers",
        "paseo_mcp.tools",
        "paseo_mcp.contributed",
        "paseo_chat.tools",
        "paseo_loops.tools",
    }
)
"""The MCP tool handlers and the tools plugins contribute: built with the MCP server."""

NOT_AT_START_UNTIL_USED = frozenset(
    {
        "paseo_relay.tunnel",
        "paseo_relay.e2ee",
        "paseo.checkpoints.plumbing",
        "paseo.scripts.supervisor",
        "paseo.files.explorer",
        "paseo.files.suggestions",
        "paseo.rpc.session_agents",
    }
)
"""Imported on first use: the relay's tunnel and E2EE for the first relayed client (the relay
is off here), the checkpoint plumbing for the first checkpoint, listing or restore, the scripts
supervisor for the first service started, the file explorer and the completions for a client's
first read, the session's view of the agent port for the first plugin handler that uses it."""


NOT_AT_START_UNTIL_CALLED = frozenset(
    {
        "paseo.workspaces.rpc",
        "paseo.workspaces.project_rpc",
        "paseo.workspaces.project_config_rpc",
        "paseo.workspaces.worktree_rpc",
        "paseo.workspaces.git_rpc",
        "paseo.workspaces.git_models",
        "paseo.agents.rpc",
        "paseo.agents.provider_rpc",
        "paseo.metadata.rpc",
        "paseo.schedules.rpc",
        "paseo.checkpoints.rpc",
        "paseo.trash.rpc",
        "paseo.usage.rpc",
        "paseo.skills.rpc",
        "paseo.terminals.rpc",
        "paseo.scripts.rpc",
        "paseo.speech.rpc",
        "paseo.speech.voice_rpc",
        "paseo.files.rpc",
        "paseo_chat.rpc",
        "paseo_chat.wire",
    }
)
"""The kernel's method groups registered from :mod:`paseo.daemon.method_index` and the chat
plugin's, registered from its stubs: their models and handlers are imported by the first call
of one of their methods."""

_RUN_DAEMON = """
import atexit, runpy, sys
_loaded = sys.argv[1]
def _write():
    with open(_loaded, "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
atexit.register(_write)
sys.argv = ["paseo", "daemon", "start", "--foreground"]
runpy.run_module("paseo", run_name="__main__", alter_sys=True)
"""
"""The daemon as ``python -m paseo daemon start --foreground``, writing the names of every
module it imported to the file named by its first argument as it exits."""


def _imported_at_start(tmp_path: Path) -> set[str]:
    home, user_home = tmp_path / "paseo", tmp_path / "home"
    user_home.mkdir()
    env = {
        **os.environ,
        "PASEO_HOME": str(home),
        "HOME": str(user_home),
        "PASEO_LISTEN": "127.0.0.1:0",
        "PYTHONPROFILEIMPORTTIME": "1",
    }
    trace, loaded = tmp_path / "imports.txt", tmp_path / "modules.txt"
    with trace.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", _RUN_DAEMON, str(loaded)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            start_new_session=True,
        )
        ready = threading.Event()

        def watch() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                if " running " in line:
                    ready.set()

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            assert ready.wait(READY_TIMEOUT), "the daemon did not become ready"
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            watcher.join(timeout=10)
    assert process.returncode == 0, trace.read_text()[-2000:]
    return set(loaded.read_text().splitlines()) | {
        line.rsplit("|", 1)[1].strip()
        for line in trace.read_text().splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_an_empty_daemon_start_imports_no_speech_engine_and_no_mcp_tooling(
    tmp_path: Path,
) -> None:
    modules = _imported_at_start(tmp_path)
    assert "paseo.daemon.runtime" in modules  # the trace is of a real start
    assert "paseo_mcp.guard" in modules  # the MCP plugin did start (its start mounts the guard)
    packages = {name.split(".")[0] for name in modules}
    assert sorted(packages & NOT_AT_START_PACKAGES) == []
    assert sorted(modules & NOT_AT_START_MODULES) == []


def test_an_empty_daemon_start_imports_no_feature_code_before_its_first_use(
    tmp_path: Path,
) -> None:
    modules = _imported_at_start(tmp_path)
    # The trace is of a real start whose services and transports were built: the relay
    # transport, the checkpoint, scripts and files services, the RPC sessions' module.
    assert {
        "paseo_relay.transport",
        "paseo.checkpoints.service",
        "paseo.scripts.service",
        "paseo.files.service",
        "paseo.rpc.session",
    } <= modules
    assert sorted(modules & NOT_AT_START_UNTIL_USED) == []


def test_an_empty_daemon_start_loads_no_lazily_registered_method_group(tmp_path: Path) -> None:
    modules = _imported_at_start(tmp_path)
    # The trace is of a real start whose services were built and whose groups were entered.
    assert {
        "paseo.agents.manager",
        "paseo.files.service",
        "paseo.daemon.method_index",
        "paseo.workspaces.worktree_port",
    } <= modules
    assert sorted(modules & NOT_AT_START_UNTIL_CALLED) == []
