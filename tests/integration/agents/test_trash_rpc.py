"""``agent.delete`` and the ``trash.*`` methods against the real daemon, with the scripted test
provider (its ``[[history]]`` prompt answers with the conversation the resumed session holds)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from paseo_hookspecs.errors import NotFound

from .conftest import scripted_config

Create = Callable[..., dict[str, Any]]


def _wait(client: Any, agent_id: str) -> dict[str, Any]:
    result: dict[str, Any] = client.call(
        "agent.wait", {"agentId": agent_id, "timeout": 20}, timeout=30
    )
    return result


def _moment(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_delete_hides_restore_brings_back_history_and_archive(
    client: Any, create_agent: Create
) -> None:
    agent = create_agent(initialPrompt="first", title="keeper")
    _wait(client, agent["id"])
    client.call("agent.archive", {"agentId": agent["id"]})
    before = client.call("agent.timeline", {"agentId": agent["id"], "limit": 1000})["entries"]
    client.call("agent.delete", {"agentId": "keeper"})
    with pytest.raises(NotFound):
        client.call("agent.get", {"agentId": agent["id"]})
    assert client.call("agent.list", {"includeArchived": True})["agents"] == []
    listing = client.call("trash.list", {})
    [entry] = listing["agents"]
    assert entry["agent"]["id"] == agent["id"]
    deleted = _moment(entry["agent"]["deletedAt"])
    assert _moment(entry["purgeAfter"]) - deleted == timedelta(days=30)
    assert listing["retentionDays"] == 30
    assert listing["cleanup"] == []

    restored = client.call("trash.restore", {"agentId": "keeper"})["agent"]
    assert restored["id"] == agent["id"]
    assert restored["deletedAt"] is None
    assert restored["archivedAt"]  # restored as it was deleted: still archived
    entries = client.call("agent.timeline", {"agentId": agent["id"], "limit": 1000})["entries"]
    assert entries == before
    assert client.call("trash.list", {})["agents"] == []
    client.call("agent.send", {"agentId": agent["id"], "text": "[[history]]"})
    assert _wait(client, agent["id"])["lastMessage"] == "first | [[history]]"


def test_trash_names_only_tombstones_and_empty_purges_the_named(
    client: Any, create_agent: Create
) -> None:
    live = create_agent(initialPrompt="live", title="live")
    gone = [create_agent(initialPrompt=f"gone {n}", title=f"gone-{n}") for n in range(2)]
    for agent in (live, *gone):
        _wait(client, agent["id"])
    for agent in gone:
        client.call("agent.delete", {"agentId": agent["id"]})
    with pytest.raises(NotFound) as info:
        client.call("trash.restore", {"agentId": "live"})
    assert "paseo trash ls" in info.value.message
    with pytest.raises(NotFound):
        client.call("trash.empty", {"agentIds": ["nobody"]})
    assert len(client.call("trash.list", {})["agents"]) == 2

    emptied = client.call("trash.empty", {"agentIds": ["gone-0"]})
    assert emptied == {"purged": [gone[0]["id"]], "cleaned": 1, "failed": 0}
    assert [e["agent"]["id"] for e in client.call("trash.list", {})["agents"]] == [gone[1]["id"]]
    with pytest.raises(NotFound):
        client.call("trash.restore", {"agentId": gone[0]["id"]})
    emptied = client.call("trash.empty", {})
    assert emptied["purged"] == [gone[1]["id"]]
    assert client.call("trash.list", {})["agents"] == []
    assert [a["id"] for a in client.call("agent.list", {})["agents"]] == [live["id"]]


def test_retention_comes_from_the_config(
    agent_daemon_factory: Callable[..., Any], workdir: Any
) -> None:
    from paseo.client import SyncClient

    live = agent_daemon_factory(scripted_config({"agents": {"trashRetentionDays": 15}}))
    with SyncClient(home=live.home, client_type="sdk") as client:
        agent = client.call(
            "agent.create", {"provider": "scripted", "cwd": str(workdir), "initialPrompt": "x"}
        )["agent"]
        _wait(client, agent["id"])
        client.call("agent.delete", {"agentId": agent["id"]})
        listing = client.call("trash.list", {})
        [entry] = listing["agents"]
        assert listing["retentionDays"] == 15
        deleted = _moment(entry["agent"]["deletedAt"])
        assert _moment(entry["purgeAfter"]) - deleted == timedelta(days=15)


def test_restoring_an_agent_restores_its_archived_workspace_and_project(
    client: Any, create_agent: Create
) -> None:
    """Issue 27, item 5: the agent came back into a workspace and project still archived."""
    agent = create_agent(initialPrompt="first", title="returning")
    _wait(client, agent["id"])
    workspace_id = client.call("agent.get", {"agentId": agent["id"]})["agent"]["workspaceId"]
    assert workspace_id
    workspace = client.call("workspace.get", {"workspaceId": workspace_id})["workspace"]
    client.call("agent.delete", {"agentId": agent["id"]})
    client.call("workspace.archive", {"workspaceId": workspace_id})
    client.call("project.archive", {"projectId": workspace["projectId"]})
    assert client.call("workspace.get", {"workspaceId": workspace_id})["workspace"]["archivedAt"]

    client.call("trash.restore", {"agentId": agent["id"]})
    restored = client.call("workspace.get", {"workspaceId": workspace_id})["workspace"]
    assert restored["archivedAt"] is None
    project = client.call("project.get", {"projectId": workspace["projectId"]})["project"]
    assert project["archivedAt"] is None
    # And the agent works there again.
    client.call("agent.send", {"agentId": agent["id"], "text": "again"})
    assert _wait(client, agent["id"])["outcome"] == "idle"
