"""A real daemon per test and a synchronous client of it, for the terminal tests."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon
from integration.terminals.support import CURSES_SCRIPT, Terminals

from paseo.client.sync import SyncClient


@pytest.fixture
def terminal_daemon(paseo_home: Path) -> Iterator[Callable[..., Terminals]]:
    """``start(config=None)``: a daemon (optionally with a config.json) and a client of it;
    everything is stopped at teardown."""
    started: list[tuple[LiveDaemon, SyncClient]] = []

    def start(config: dict[str, Any] | None = None) -> Terminals:
        paseo_home.mkdir(parents=True, exist_ok=True)
        if config is not None:
            (paseo_home / "config.json").write_text(json.dumps(config))
        live = start_daemon(paseo_home)
        client = SyncClient(home=paseo_home, client_type="cli", reconnect=False)
        started.append((live, client))
        terminals = Terminals(live, client)
        client.on("terminal.changed", terminals.record)
        client.subscribe(["terminals"])
        return terminals

    try:
        yield start
    finally:
        for live, client in started:
            with contextlib.suppress(Exception):
                client.close()
            stop_daemon(live.home)
            kill_leftover(live.pid)


@pytest.fixture
def curses_script(tmp_path: Path) -> str:
    path = tmp_path / "curses_app.py"
    path.write_text(CURSES_SCRIPT)
    return f"{sys.executable} {path}"
