"""A real daemon with the ``scripted`` test provider loaded as a directory plugin."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon

SCRIPTED_PLUGIN = Path(__file__).resolve().parent / "scripted_agent"


def scripted_config(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """config.json loading the scripted provider (plus ``extra`` merged at the top level)."""
    config: dict[str, Any] = {
        "plugins": {"scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)}}
    }
    config.update(extra or {})
    return config


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The directory agents run in."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def agent_daemon_factory(paseo_home: Path) -> Iterator[Callable[..., LiveDaemon]]:
    """Start (or restart) the daemon with the scripted provider; always stopped at teardown."""
    started: list[LiveDaemon] = []

    def start(
        config: dict[str, Any] | None = None, env: dict[str, str] | None = None
    ) -> LiveDaemon:
        paseo_home.mkdir(parents=True, exist_ok=True)
        (paseo_home / "config.json").write_text(json.dumps(config or scripted_config()))
        live = start_daemon(paseo_home, {"PASEO_AGENT_START_TIMEOUT": "5", **(env or {})})
        started.append(live)
        return live

    try:
        yield start
    finally:
        for live in started:
            stop_daemon(live.home)
            kill_leftover(live.pid)


@pytest.fixture
def agent_daemon(agent_daemon_factory: Callable[..., LiveDaemon]) -> LiveDaemon:
    return agent_daemon_factory()


@pytest.fixture
def client(agent_daemon: LiveDaemon) -> Iterator[Any]:
    """A connected :class:`paseo.client.SyncClient` of the agent daemon."""
    from paseo.client import SyncClient

    with SyncClient(home=agent_daemon.home, client_type="sdk") as connected:
        yield connected


@pytest.fixture
def create_agent(client: Any, workdir: Path) -> Callable[..., dict[str, Any]]:
    """Create a scripted agent in ``workdir`` (extra params override); returns its record."""

    def create(**params: Any) -> dict[str, Any]:
        body = {"provider": "scripted", "cwd": str(workdir), **params}
        agent: dict[str, Any] = client.call("agent.create", body)["agent"]
        return agent

    return create
