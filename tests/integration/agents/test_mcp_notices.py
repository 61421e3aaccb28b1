"""notifyOnFinish across a daemon SIGKILL: the busy parent's ``<paseo-system>`` notice is never
lost — not when it was queued, and not when the daemon died after the child's attention was
durable but before the notice was queued (the state on disk is reproduced by dropping the
notice and its watermark from the queue file while the daemon is dead), and not when the queue
was left at its old place (``$PASEO_HOME/mcp/notices.json``, before the MCP server was a plugin
of its own)."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers.daemon_rpc import LiveDaemon, stop_daemon
from helpers.waiting import wait_for
from paseo_mcp.plugin import state_dir

from paseo.client import SyncClient

from .conftest import scripted_config


def _wait(client: Any, agent_id: str) -> dict[str, Any]:
    result: dict[str, Any] = client.call(
        "agent.wait", {"agentId": agent_id, "timeout": 60}, timeout=70
    )
    return result


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _notices(home: Path) -> dict[str, Any]:
    path = state_dir(home) / "notices.json"
    document: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return document


def _system_prompts(client: Any, agent_id: str) -> list[str]:
    entries = client.call("agent.timeline", {"agentId": agent_id, "limit": 200})["entries"]
    return [
        e["event"]["item"]["text"]
        for e in entries
        if e["event"].get("item", {}).get("type") == "user_message"
        and "<paseo-system>" in e["event"]["item"]["text"]
    ]


@pytest.mark.parametrize("crash", ["after_queueing", "before_queueing", "queued_at_old_path"])
def test_a_busy_parent_gets_its_notice_after_a_sigkill(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, crash: str
) -> None:
    live = agent_daemon_factory(scripted_config())
    request = {
        "provider": "scripted",
        "title": "worker",
        "background": True,
        "notifyOnFinish": True,
    }
    with SyncClient(home=live.home, client_type="sdk") as client:
        parent = client.call(
            "agent.create",
            {
                "provider": "scripted",
                "cwd": str(workdir),
                "title": "parent",
                "initialPrompt": f"[[mcp:create_agent {json.dumps(request)}]]",
            },
        )["agent"]["id"]
        reply = _wait(client, parent)["lastMessage"]
        child = json.loads(reply.removeprefix("mcp: "))["agent"]["id"]
        # The parent is busy when its child finishes: the notice has to wait in the queue.
        client.call("agent.send", {"agentId": parent, "text": "[[slow:120]] busy"})
        client.call("agent.send", {"agentId": child, "text": "child work"})
        assert _wait(client, child)["lastMessage"] == "echo: child work"
        wait_for(
            lambda: [n["childId"] for n in _notices(live.home).get("queue", [])] == [child],
            what="the notice to be queued",
        )
        assert client.call("agent.get", {"agentId": parent})["agent"]["lastStatus"] == "running"
        assert _system_prompts(client, parent) == []

    os.kill(live.pid, signal.SIGKILL)
    wait_for(lambda: _gone(live.pid), what="the daemon to die")
    if crash == "before_queueing":
        # The child's attention is in its timeline; the queue never heard of it.
        path = state_dir(live.home) / "notices.json"
        path.write_text(json.dumps({"queue": [], "notified": {}}))
    legacy = live.home / "mcp" / "notices.json"
    if crash == "queued_at_old_path":
        # A home whose queue was written before the MCP server was a plugin of its own.
        legacy.parent.mkdir()
        queued = _notices(live.home)
        # Marked, so the notice delivered is told from one recovery would queue anew.
        queued["queue"][0]["text"] = queued["queue"][0]["text"].replace(
            "</paseo-system>", " (old queue)</paseo-system>"
        )
        legacy.write_text(json.dumps(queued))
        (state_dir(live.home) / "notices.json").unlink()

    restarted = agent_daemon_factory(scripted_config())
    with SyncClient(home=restarted.home, client_type="sdk") as client:
        wait_for(lambda: _system_prompts(client, parent), timeout=60, what="the parent's notice")
        (text,) = _system_prompts(client, parent)
        assert child in text
        assert "finished its turn" in text
        assert ("(old queue)" in text) == (crash == "queued_at_old_path")
        assert "echo: <paseo-system>" in _wait(client, parent)["lastMessage"]
        assert _notices(restarted.home)["queue"] == []
        assert not legacy.exists()
    # Delivered once: another restart sends nothing again.
    stop_daemon(restarted.home)
    again = agent_daemon_factory(scripted_config())
    with SyncClient(home=again.home, client_type="sdk") as client:
        client.call("server.ping", {})
        assert len(_system_prompts(client, parent)) == 1
        assert _notices(again.home)["queue"] == []
