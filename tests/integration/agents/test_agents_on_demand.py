"""A daemon with more stored agents than it keeps loaded: closed agents stay on disk until
used, are named by id, id prefix or title all the same, lose no change when dropped from
memory and loaded again, and their streams can be subscribed to before they were ever used."""

from __future__ import annotations

import json
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
from paseo_hookspecs.records import agent_record_path

from paseo.agents.roster import KEEP_AT_REST
from paseo.client import SyncClient
from paseo.testing.store_conformance import agent_data, iso

CLOSED = KEEP_AT_REST + 40


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _agent_id(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-{n:012x}"


def _seed(home: Path) -> None:
    """Closed agents as a stopped daemon leaves them, one left ``running`` by a crash and one
    closed while a permission request was pending (an older daemon left the attention)."""
    for n in range(CLOSED + 2):
        status = "running" if n == CLOSED else "closed"
        fields: dict[str, Any] = {"lastStatus": status, "archivedAt": None, "title": f"job {n}"}
        if n == CLOSED + 1:
            fields.update(
                requiresAttention=True, attentionReason="permission", attentionTimestamp=iso(n)
            )
        record = agent_data(_agent_id(n), cwd=f"/tmp/repo-{n % 5}", created_at=iso(n), **fields)
        path = home / agent_record_path(record["id"], record["cwd"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))


def test_agents_load_on_demand_and_keep_every_change(
    agent_daemon_factory: Callable[..., LiveDaemon], paseo_home: Path
) -> None:
    _seed(paseo_home)
    daemon = agent_daemon_factory()
    with SyncClient(home=paseo_home, client_type="sdk") as client:
        listed = client.call("agent.list", {"limit": 5})
        assert listed["total"] == CLOSED + 2
        # Boot closed the agent a crash left running (it has no process now).
        crashed = client.call("agent.get", {"agentId": _agent_id(CLOSED)})["agent"]
        assert crashed["lastStatus"] == "closed"
        # Loading an agent clears a permission attention nothing can answer any more.
        stale = client.call("agent.get", {"agentId": _agent_id(CLOSED + 1)})["agent"]
        assert stale.get("requiresAttention") is not True
        assert stale.get("attentionReason") is None

        # A stream of an agent never used yet can be subscribed to; an unknown one cannot.
        untouched = _agent_id(7)
        subscribed = client.call("server.subscribe", {"streams": [f"agent:{untouched}"]})
        assert [s["stream"] for s in subscribed["streams"]] == [f"agent:{untouched}"]
        with pytest.raises(NotFound):
            client.call("server.subscribe", {"streams": ["agent:ffffffff-no-such-agent"]})

        # A change to the first agent, then enough others used to drop it from memory.
        first = _agent_id(0)
        client.call("agent.update", {"agentId": first, "title": "renamed while loaded"})
        for n in range(1, CLOSED):
            assert client.call("agent.get", {"agentId": _agent_id(n)})["agent"]["id"]
        again = client.call("agent.get", {"agentId": first})["agent"]
        assert again["title"] == "renamed while loaded"
        # A change to an agent loaded again after it was dropped (its record read back).
        client.call("agent.update", {"agentId": _agent_id(1), "labels": {"pass": "second"}})

        # Named by a unique id prefix and by title, loaded or not.
        by_prefix = client.call("agent.get", {"agentId": _agent_id(CLOSED - 1)[:8]})
        assert by_prefix["agent"]["id"] == _agent_id(CLOSED - 1)
        by_title = client.call("agent.get", {"agentId": "job 3"})
        assert by_title["agent"]["id"] == _agent_id(3)
        with pytest.raises(NotFound):
            client.call("agent.get", {"agentId": "no such job"})
        every = client.call("agent.list", {"includeArchived": True})["agents"]
        assert len(every) == CLOSED + 2
        assert {a["id"]: a["title"] for a in every}[first] == "renamed while loaded"

    # Every acknowledged change is on disk: it survives the daemon being killed.
    os.kill(daemon.pid, signal.SIGKILL)
    wait_for(lambda: _gone(daemon.pid), what="the daemon to die")
    agent_daemon_factory()
    with SyncClient(home=paseo_home, client_type="sdk") as client:
        record = client.call("agent.get", {"agentId": first})["agent"]
        assert record["title"] == "renamed while loaded"
        relabelled = client.call("agent.get", {"agentId": _agent_id(1)})["agent"]
        assert relabelled["labels"]["pass"] == "second"
