"""Internal agents (the daemon's own, e.g. metadata generation) through the real daemon: never
listed, never announced on the ``agents`` stream, and metadata ones a crash left behind are
deleted at the next start."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from integration.agents.conftest import SCRIPTED_PLUGIN, scripted_config
from paseo_hookspecs.errors import InvalidParams, NotFound

from paseo.client import SyncClient

SCRIPTED_PROGRAM = SCRIPTED_PLUGIN / "paseo_scripted" / "program.py"


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


def test_an_internal_agent_is_refused_every_permission_at_once(client: Any, workdir: Path) -> None:
    # The scripted program asks before its one tool: for an internal agent the kernel answers
    # no at once, where nobody would ever see the request.
    agent = client.call(
        "agent.create",
        {
            "provider": "scripted",
            "cwd": str(workdir),
            "internal": True,
            "initialPrompt": "Write it [[write:pwned.txt:pwned]]",
        },
    )["agent"]
    done = client.call("agent.wait", {"agentId": agent["id"], "timeout": 20}, timeout=30)
    assert (done["outcome"], done["lastMessage"]) == (
        "idle",
        "not written: internal agents run no tools",
    )
    assert done["pendingPermissions"] == []
    assert not (workdir / "pwned.txt").exists()
    # Nor can a mode give it tools back.
    with pytest.raises(InvalidParams, match="internal"):
        client.call("agent.mode.set", {"agentId": agent["id"], "modeId": "default"})


def test_no_internal_agent_starts_with_a_provider_that_cannot_run_without_tools(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    # A custom provider runs a program of the user's choosing: its plugin cannot vouch that it
    # runs without tools, so an internal agent never starts there.
    other = {
        "extends": "scripted",
        "label": "Other program",
        "command": [sys.executable, "-u", str(SCRIPTED_PROGRAM)],
    }
    daemon = agent_daemon_factory(scripted_config({"agents": {"providers": {"other": other}}}))
    with SyncClient(home=daemon.home) as client:
        common = {"provider": "other", "cwd": str(workdir), "initialPrompt": "hi"}
        agent = client.call("agent.create", {**common, "internal": True})["agent"]
        done = client.call("agent.wait", {"agentId": agent["id"], "timeout": 20}, timeout=30)
        assert done["outcome"] == "error"
        assert "cannot guarantee an agent without tools" in (done["error"] or "")
        # The same provider runs a visible agent as before.
        shown = client.call("agent.create", common)["agent"]
        done = client.call("agent.wait", {"agentId": shown["id"], "timeout": 20}, timeout=30)
        assert (done["outcome"], done["lastMessage"]) == ("idle", "echo: hi")
