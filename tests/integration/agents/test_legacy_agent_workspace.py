"""An agent recorded without a ``workspaceId`` (by an older Paseo) gets the workspace of its cwd
at boot, against the real daemon (issue 27, item 5)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from helpers.daemon_rpc import LiveDaemon, stop_daemon

from paseo.client import SyncClient


def test_a_legacy_agent_without_a_workspace_is_given_one_at_boot(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, paseo_home: Path
) -> None:
    first = agent_daemon_factory()
    with SyncClient(home=first.home, client_type="sdk") as client:
        agent = client.call("agent.create", {"provider": "scripted", "cwd": str(workdir)})["agent"]
        workspace_id = agent["workspaceId"]
        client.call("agent.stop", {"agentId": agent["id"]})
    stop_daemon(first.home)
    [record_file] = paseo_home.glob(f"agents/*/{agent['id']}.json")
    record = json.loads(record_file.read_text())
    del record["workspaceId"]  # as a Paseo from before workspaces wrote it
    record_file.write_text(json.dumps(record))

    second = agent_daemon_factory()
    with SyncClient(home=second.home, client_type="sdk") as client:
        placed = client.call("agent.get", {"agentId": agent["id"]})["agent"]
        # The workspace of its cwd (the one it had, found again by its directory).
        assert placed["workspaceId"] == workspace_id
        listed = client.call("agent.list", {"workspaceId": workspace_id})["agents"]
        assert [a["id"] for a in listed] == [agent["id"]]
    assert json.loads(record_file.read_text())["workspaceId"] == workspace_id
    # The marker is written after the stamps, which agent.get may already have seen: waited for
    # (no call acknowledges it), as the next boot would find it.
    marker = paseo_home / "legacy-agents-placed"
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()


def test_a_legacy_agent_written_after_the_first_pass_is_placed_too(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, paseo_home: Path
) -> None:
    """An older program can write a record without a workspace at any time between two starts:
    the pass runs on every boot (it reads only such records), not once per home."""
    first = agent_daemon_factory()
    with SyncClient(home=first.home, client_type="sdk") as client:
        agent = client.call("agent.create", {"provider": "scripted", "cwd": str(workdir)})["agent"]
        client.call("agent.stop", {"agentId": agent["id"]})
    stop_daemon(first.home)
    (paseo_home / "legacy-agents-placed").write_text("1 agent(s) placed\n")  # an earlier pass
    [record_file] = paseo_home.glob(f"agents/*/{agent['id']}.json")
    record = json.loads(record_file.read_text())
    del record["workspaceId"]
    record_file.write_text(json.dumps(record))

    second = agent_daemon_factory()
    with SyncClient(home=second.home, client_type="sdk") as client:
        # Edited in place, the record disagrees with the JSON store's index file (which says it
        # has a workspace): the pass finds it once the store has checked its index against the
        # records, just after ready.
        # Watched on disk first: the pass itself stamps the record, with no call loading the
        # agent (one loaded meanwhile waits for the pass: the test above asks at once).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if json.loads(record_file.read_text()).get("workspaceId") is not None:
                break
            time.sleep(0.1)
        placed = client.call("agent.get", {"agentId": agent["id"]})["agent"]
        assert placed["workspaceId"] == agent["workspaceId"]
