"""The agent.* protocol against the real daemon, with the scripted test provider."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.waiting import wait_for
from paseo_hookspecs.errors import InvalidParams, NotFound

Create = Callable[..., dict[str, Any]]


def _wait(client: Any, agent_id: str, timeout: float = 20) -> dict[str, Any]:
    result: dict[str, Any] = client.call(
        "agent.wait", {"agentId": agent_id, "timeout": timeout}, timeout=timeout + 10
    )
    return result


def _events(client: Any, agent_id: str) -> list[dict[str, Any]]:
    entries = client.call("agent.timeline", {"agentId": agent_id, "limit": 1000})["entries"]
    return [entry["event"] for entry in entries]


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["item"]["type"] if e["type"] == "timeline" else e["type"] for e in events]


def test_create_prompt_reply_and_record_fields(client: Any, create_agent: Create) -> None:
    agent = create_agent(initialPrompt="hello", title="greeter", labels={"team": "a"})
    assert agent["lastStatus"] in ("initializing", "running")
    assert agent["workspaceId"].startswith("wks_")
    result = _wait(client, agent["id"])
    assert result["outcome"] == "idle"
    assert result["lastMessage"] == "echo: hello"
    record = client.call("agent.get", {"agentId": "greeter"})["agent"]
    assert record["lastStatus"] == "idle"
    assert record["persistence"]["provider"] == "scripted"
    assert record["runtimeInfo"]["sessionId"] == record["persistence"]["sessionId"]
    assert record["lastUserMessageAt"]
    assert record["lastActivityAt"]
    assert record["requiresAttention"] is True
    assert record["attentionReason"] == "finished"
    assert _kinds(_events(client, agent["id"])) == [
        "user_message",
        "thread_started",
        "turn_started",
        "assistant_message",
        "turn_completed",
        "attention_required",
    ]
    # Ids resolve by full id, unique prefix and title alike.
    assert client.call("agent.get", {"agentId": agent["id"][:6]})["agent"]["id"] == agent["id"]
    with pytest.raises(NotFound):
        client.call("agent.get", {"agentId": "no-such-agent"})


def test_message_id_deduplicates(client: Any, create_agent: Create) -> None:
    agent = create_agent()
    first = client.call("agent.send", {"agentId": agent["id"], "text": "once", "messageId": "m1"})
    again = client.call("agent.send", {"agentId": agent["id"], "text": "once", "messageId": "m1"})
    assert first["accepted"] is True
    assert again["accepted"] is False
    assert _wait(client, agent["id"])["outcome"] == "idle"
    users = [
        e for e in _events(client, agent["id"]) if e.get("item", {}).get("type") == "user_message"
    ]
    assert [u["item"]["messageId"] for u in users] == ["m1"]


def test_prompting_a_running_agent_interrupts_and_replaces_the_run(
    client: Any, create_agent: Create
) -> None:
    agent = create_agent(initialPrompt="[[slow:60]] first")
    wait_for(lambda: "turn_started" in _kinds(_events(client, agent["id"])), what="the first turn")
    client.call("agent.send", {"agentId": agent["id"], "text": "second"})
    result = _wait(client, agent["id"])
    assert result["outcome"] == "idle"
    assert result["lastMessage"] == "echo: second"
    kinds = _kinds(_events(client, agent["id"]))
    canceled = kinds.index("turn_canceled")
    assert kinds.index("turn_completed") > canceled
    # The replaced run ended without asking for attention; the new one finished.
    assert kinds.count("attention_required") == 1


def test_a_running_agent_makes_its_workspace_running(client: Any, create_agent: Create) -> None:
    agent = create_agent(initialPrompt="[[slow:60]] long")

    def running() -> list[str]:
        listed: list[str] = client.call("workspace.list", {})["running"]
        return listed

    wait_for(lambda: running() == [agent["workspaceId"]], what="the workspace running")
    client.call("agent.interrupt", {"agentId": agent["id"]})
    _wait(client, agent["id"])
    wait_for(lambda: running() == [], what="the workspace idle again")


def test_interrupt_cancels_the_turn(client: Any, create_agent: Create) -> None:
    agent = create_agent(initialPrompt="[[slow:60]] long")
    wait_for(lambda: "turn_started" in _kinds(_events(client, agent["id"])), what="turn")
    client.call("agent.interrupt", {"agentId": agent["id"]})
    assert _wait(client, agent["id"])["outcome"] == "idle"
    assert _kinds(_events(client, agent["id"]))[-1] == "turn_canceled"


def test_permission_allow_with_edited_input(
    client: Any, create_agent: Create, workdir: Path
) -> None:
    agent = create_agent(initialPrompt="[[write:out.txt:original]]")
    result = _wait(client, agent["id"])
    assert result["outcome"] == "permission"
    request = result["pendingPermissions"][0]
    assert request["kind"] == "tool"
    assert request["title"] == "Write out.txt"
    assert request["input"]["content"] == "original"
    assert request["detail"]["type"] == "write"
    record = client.call("agent.get", {"agentId": agent["id"]})["agent"]
    assert record["attentionReason"] == "permission"
    listed = client.call("agent.permissions.list", {})["requests"]
    assert [(p["agentId"], p["request"]["id"]) for p in listed] == [(agent["id"], request["id"])]
    client.call(
        "agent.permissions.respond",
        {
            "agentId": agent["id"],
            "requestId": request["id"],
            "behavior": "allow",
            "updatedInput": {"content": "edited"},
        },
    )
    assert _wait(client, agent["id"])["lastMessage"] == "wrote out.txt"
    assert (workdir / "out.txt").read_text() == "edited"
    # Answered once means resolved for everyone: a second answer finds nothing pending.
    with pytest.raises(NotFound):
        client.call(
            "agent.permissions.respond",
            {"agentId": agent["id"], "requestId": request["id"], "behavior": "deny"},
        )
    resolved = [e for e in _events(client, agent["id"]) if e["type"] == "permission_resolved"]
    assert len(resolved) == 1
    assert resolved[0]["resolution"]["behavior"] == "allow"


def test_permission_deny_and_deny_with_interrupt(
    client: Any, create_agent: Create, workdir: Path
) -> None:
    agent = create_agent(initialPrompt="[[write:no.txt:x]]")
    request = _wait(client, agent["id"])["pendingPermissions"][0]
    client.call(
        "agent.permissions.respond",
        {
            "agentId": agent["id"],
            "requestId": request["id"],
            "behavior": "deny",
            "message": "not today",
        },
    )
    assert _wait(client, agent["id"])["lastMessage"] == "not written: not today"
    assert not (workdir / "no.txt").exists()

    client.call("agent.send", {"agentId": agent["id"], "text": "[[write:no2.txt:x]]"})
    request = _wait(client, agent["id"])["pendingPermissions"][0]
    client.call(
        "agent.permissions.respond",
        {"agentId": agent["id"], "requestId": request["id"], "behavior": "deny", "interrupt": True},
    )
    result = _wait(client, agent["id"])
    assert result["outcome"] == "idle"
    assert not (workdir / "no2.txt").exists()
    assert _kinds(_events(client, agent["id"]))[-1] == "turn_canceled"


def test_attention_is_cleared_by_a_client_and_never_set_for_internal_agents(
    client: Any, create_agent: Create
) -> None:
    agent = create_agent(initialPrompt="hi")
    _wait(client, agent["id"])
    cleared = client.call("agent.attention.clear", {"agentId": agent["id"]})["agent"]
    assert cleared["requiresAttention"] is False
    assert cleared["attentionReason"] is None
    internal = create_agent(initialPrompt="hi", internal=True)
    _wait(client, internal["id"])
    record = client.call("agent.get", {"agentId": internal["id"]})["agent"]
    assert not record.get("requiresAttention")
    assert "attention_required" not in _kinds(_events(client, internal["id"]))


def test_text_chunks_are_coalesced(client: Any, create_agent: Create) -> None:
    agent = create_agent(initialPrompt="[[chunks:400]]")
    result = _wait(client, agent["id"])
    expected = " ".join(f"c{i}" for i in range(400))
    assert result["lastMessage"] == expected
    texts = [
        e
        for e in _events(client, agent["id"])
        if e.get("item", {}).get("type") == "assistant_message"
    ]
    assert len(texts) < 40
    assert "".join(t["item"]["text"] for t in texts) == expected


def test_timeline_windows_live_stream_and_gap_refetch(client: Any, create_agent: Create) -> None:
    agent = create_agent(initialPrompt="one")
    _wait(client, agent["id"])
    received: list[dict[str, Any]] = []
    done = threading.Event()

    def on_event(_method: str, params: dict[str, Any]) -> None:
        received.append(params)
        if params["entry"]["event"]["type"] == "attention_required":
            done.set()

    client.on("agent.event", on_event)
    client.subscribe([f"agent:{agent['id']}"])
    client.call("agent.send", {"agentId": agent["id"], "text": "two"})
    assert done.wait(20)
    stream_seqs = [p["seq"] for p in received]
    assert stream_seqs == list(range(stream_seqs[0], stream_seqs[0] + len(received)))
    seqs = [p["entry"]["seq"] for p in received]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))

    full = client.call("agent.timeline", {"agentId": agent["id"]})
    epoch = full["epoch"]
    assert [e["seq"] for e in full["entries"]] == list(range(1, seqs[-1] + 1))
    assert full["last"] == {"epoch": epoch, "seq": seqs[-1]}
    tail = client.call("agent.timeline", {"agentId": agent["id"], "limit": 3, "tail": True})
    assert [e["seq"] for e in tail["entries"]] == [seqs[-1] - 2, seqs[-1] - 1, seqs[-1]]
    assert tail["hasMore"] is True
    before = client.call(
        "agent.timeline",
        {"agentId": agent["id"], "before": {"epoch": epoch, "seq": 4}, "limit": 2, "tail": True},
    )
    assert [e["seq"] for e in before["entries"]] == [2, 3]
    # A client that missed entries re-fetches after the last one it holds.
    missed_after = seqs[0] + 1
    gap = client.call(
        "agent.timeline", {"agentId": agent["id"], "after": {"epoch": epoch, "seq": missed_after}}
    )
    assert [e["seq"] for e in gap["entries"]] == list(range(missed_after + 1, seqs[-1] + 1))
    assert gap["reset"] is False
    assert gap["hasMore"] is False
    # A cursor from another epoch cannot be continued: the client starts over.
    stale = client.call(
        "agent.timeline", {"agentId": agent["id"], "after": {"epoch": "other", "seq": 2}}
    )
    assert stale["reset"] is True
    assert stale["entries"][-1]["seq"] == seqs[-1]


def test_update_mode_model_and_reload(client: Any, create_agent: Create) -> None:
    agent = create_agent(initialPrompt="first")
    _wait(client, agent["id"])
    updated = client.call(
        "agent.update", {"agentId": agent["id"], "title": "renamed", "labels": {"k": "v"}}
    )["agent"]
    assert updated["title"] == "renamed"
    assert updated["labels"] == {"k": "v"}
    removed = client.call("agent.update", {"agentId": "renamed", "labels": {"k": None}})["agent"]
    assert removed["labels"] == {}
    moded = client.call("agent.mode.set", {"agentId": agent["id"], "modeId": "plan"})["agent"]
    assert moded["config"]["modeId"] == "plan"
    assert moded["runtimeInfo"]["modeId"] == "plan"
    with pytest.raises(InvalidParams):
        client.call("agent.mode.set", {"agentId": agent["id"], "modeId": "nope"})
    modes = client.call("agent.modes", {"agentId": agent["id"]})
    assert modes["current"] == "plan"
    assert [m["id"] for m in modes["modes"]] == ["default", "plan"]
    session = moded["persistence"]["sessionId"]
    reloaded = client.call("agent.reload", {"agentId": agent["id"]}, timeout=60)["agent"]
    assert reloaded["lastStatus"] == "idle"
    assert reloaded["persistence"]["sessionId"] == session
    client.call("agent.send", {"agentId": agent["id"], "text": "[[history]]"})
    assert _wait(client, agent["id"])["lastMessage"] == "first | [[history]]"


def test_archive_restore_and_delete(client: Any, create_agent: Create) -> None:
    agent = create_agent(initialPrompt="hi")
    _wait(client, agent["id"])
    archived = client.call("agent.archive", {"agentId": agent["id"]})["agent"]
    assert archived["archivedAt"]
    assert archived["lastStatus"] == "closed"
    assert agent["id"] not in [a["id"] for a in client.call("agent.list", {})["agents"]]
    listed = client.call("agent.list", {"includeArchived": True})["agents"]
    assert agent["id"] in [a["id"] for a in listed]
    # A new prompt un-archives and resumes.
    client.call("agent.send", {"agentId": agent["id"], "text": "back"})
    assert _wait(client, agent["id"])["lastMessage"] == "echo: back"
    assert client.call("agent.get", {"agentId": agent["id"]})["agent"].get("archivedAt") is None
    client.call("agent.delete", {"agentId": agent["id"]})
    with pytest.raises(NotFound):
        client.call("agent.get", {"agentId": agent["id"]})
    with pytest.raises(NotFound):
        client.call("agent.timeline", {"agentId": agent["id"]})


def test_unknown_provider_is_refused_with_the_known_ones(client: Any, workdir: Path) -> None:
    with pytest.raises(InvalidParams) as info:
        client.call("agent.create", {"provider": "nope", "cwd": str(workdir)})
    assert "scripted" in info.value.message
    assert client.call("agent.list", {})["agents"] == []


def test_provider_list_and_models(client: Any) -> None:
    providers = client.call("provider.list", {"refresh": True})["providers"]
    scripted = next(p for p in providers if p["id"] == "scripted")
    assert scripted["availability"]["status"] == "ready"
    assert scripted["availability"]["checkedAt"]
    # Every provider reports a status, ready or with the reason it is not.
    assert all(
        p["availability"]["status"] == "ready" or p["availability"]["reason"] for p in providers
    )
    models = client.call("provider.models", {"providerId": "scripted"})
    assert models["models"][0] == {
        "id": "default",
        "label": "Default",
        "default": True,
        "thinkingOptions": [{"id": "low", "label": "Low"}],
    }
    assert [m["id"] for m in models["modes"]] == ["default", "plan"]
