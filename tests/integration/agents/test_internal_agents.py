"""Internal agents (the daemon's own, e.g. metadata generation) through the real daemon: never
listed, never announced on the ``agents`` stream, and metadata ones a crash left behind are
deleted at the next start."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from paseo_hookspecs.errors import NotFound

from paseo.client import SyncClient


def test_internal_agents_are_never_listed_nor_announced(client: Any, workdir: Path) -> None:
    announced: list[str] = []
    client.on("agent.created", lambda _m, p: announced.append(p["agent"]["id"]))
    client.on("agent.updated", lambda _m, p: announced.append(p["agent"]["id"]))
    client.subscribe(["agents"])
    common = {"provider": "scripted", "cwd": str(workdir), "initialPrompt": "hi"}
    hidden = client.call("agent.create", {**common, "internal": True})["agent"]
    shown = client.call("agent.create", {**common, "title": "shown"})["agent"]
    client.call("agent.wait", {"agentId": hidden["id"], "timeout": 20})
    client.call("agent.wait", {"agentId": shown["id"], "timeout": 20})
    wait_for(lambda: shown["id"] in announced, what="the visible agent's announcement")
    assert hidden["id"] not in announced
    assert [a["id"] for a in client.call("agent.list", {"includeArchived": True})["agents"]] == [
        shown["id"]
    ]
    # Still reachable by id, for the daemon's own use.
    assert client.call("agent.get", {"agentId": hidden["id"]})["agent"]["internal"] is True
    # Deleted, it is gone for good: an internal agent leaves no tombstone in the trash.
    client.call("agent.delete", {"agentId": hidden["id"]})
    with pytest.raises(NotFound):
        client.call("agent.get", {"agentId": hidden["id"]})
    assert hidden["id"] not in [e["agent"]["id"] for e in client.call("trash.list")["agents"]]


def test_a_metadata_agent_left_by_a_crash_is_deleted_at_start(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    daemon = agent_daemon_factory()
    with SyncClient(home=daemon.home) as client:
        left = client.call(
            "agent.create",
            {
                "provider": "scripted",
                "cwd": str(workdir),
                "internal": True,
                "labels": {"paseo.metadata": "title"},
            },
        )["agent"]
        other = client.call(
            "agent.create", {"provider": "scripted", "cwd": str(workdir), "internal": True}
        )["agent"]
    os.kill(daemon.pid, signal.SIGKILL)
    wait_for(lambda: _gone(daemon.pid), what="the daemon to die")
    restarted = agent_daemon_factory()
    with SyncClient(home=restarted.home) as client:
        with pytest.raises(NotFound):
            client.call("agent.get", {"agentId": left["id"]})
        # An internal agent that is not the metadata service's is not its to delete.
        assert client.call("agent.get", {"agentId": other["id"]})["agent"]["internal"] is True


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
