"""A real daemon process per test, on a free port and a private home (as daemon_rpc's)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon


@pytest.fixture
def daemon_factory(paseo_home: Path) -> Iterator[Callable[..., LiveDaemon]]:
    """Start the daemon (optionally with a config.json and extra environment); always stopped
    at teardown, killed if it will not stop."""
    started: list[LiveDaemon] = []

    def start(
        config: dict[str, Any] | None = None, env: dict[str, str] | None = None
    ) -> LiveDaemon:
        paseo_home.mkdir(parents=True, exist_ok=True)
        if config is not None:
            (paseo_home / "config.json").write_text(json.dumps(config))
        live = start_daemon(paseo_home, env)
        started.append(live)
        return live

    try:
        yield start
    finally:
        for live in started:
            stop_daemon(live.home)
            kill_leftover(live.pid)
