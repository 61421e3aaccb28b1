"""Pure parts of the TypeScript wire transport: the outbound models' exactness, translation of
this daemon's events, dense timeline numbering, the projected view and its windows, snapshots
and placements, the envelope and the hello rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from paseo_tswire import handshake, projection, timeline, translate
from paseo_tswire.envelope import FrameError, parse_frame, session_frame, validate_outbound
from paseo_tswire.models import messages as out
from paseo_tswire.models import timeline as ts
from paseo_tswire.models.agent import CheckoutGit
from pydantic import ValidationError


def entry(seq: int, event: dict[str, Any], epoch: str = "e1") -> dict[str, Any]:
    return {"agentId": "a", "seq": seq, "epoch": epoch, "timestamp": f"t{seq}", "event": event}


def tl(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "timeline", "provider": "claude", "item": item}


def text(kind: str, body: str) -> dict[str, Any]:
    return tl({"type": kind, "text": body})


def tool(call_id: str, status: str, **extra: Any) -> dict[str, Any]:
    detail = extra.pop("detail", {"type": "shell", "command": "ls"})
    return tl(
        {
            "type": "tool_call",
            "callId": call_id,
            "name": "Bash",
            "status": status,
            "detail": detail,
            **extra,
        }
    )


TURN = {"type": "turn_started", "provider": "claude", "turnId": "x"}


def test_optional_fields_are_left_out_and_nullable_ones_kept() -> None:
    agent_free = out.FetchAgent(requestId="r", agent=None, error=None).wire()
    assert agent_free == {"requestId": "r", "agent": None, "error": None}
    assert "project" not in agent_free
    with pytest.raises(ValidationError):
        out.FetchAgent.model_validate({"requestId": "r", "agent": None, "error": None, "x": 1})


def test_a_tool_call_is_exact_and_carries_an_error_only_when_failed() -> None:
    running = translate.item(tool("c1", "running")["item"])
    assert running.wire() == {
        "type": "tool_call",
        "callId": "c1",
        "name": "Bash",
        "detail": {"type": "shell", "command": "ls"},
        "status": "running",
        "error": None,
    }
    failed = translate.item(tool("c1", "failed")["item"])
    assert failed.wire()["error"] == "failed"
    with pytest.raises(ValidationError):
        ts.ToolCallItem.model_validate({**running.wire(), "extra": True})


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (
            {"type": "read", "path": "/f", "content": "x"},
            {"type": "read", "filePath": "/f", "content": "x"},
        ),
        (
            {"type": "edit", "path": "/f", "oldText": "a", "newText": "b", "diff": "d"},
            {
                "type": "edit",
                "filePath": "/f",
                "oldString": "a",
                "newString": "b",
                "unifiedDiff": "d",
            },
        ),
        (
            {"type": "search", "query": "q", "results": "r"},
            {"type": "search", "query": "q", "content": "r"},
        ),
        (
            {"type": "sub_agent", "description": "d", "agentType": "t"},
            {"type": "sub_agent", "description": "d", "subAgentType": "t", "log": ""},
        ),
        (
            {"type": "other", "input": {"a": 1}},
            {"type": "unknown", "input": {"a": 1}, "output": None},
        ),
    ],
)
def test_details_are_renamed_to_the_client_fields(
    ours: dict[str, Any], theirs: dict[str, Any]
) -> None:
    assert translate.detail(ours).wire() == theirs


def test_a_permission_request_names_its_tool_and_provider() -> None:
    request = translate.permission(
        {
            "id": "p1",
            "kind": "tool",
            "title": "Write a.txt",
            "toolName": "Write",
            "input": {"f": 1},
        },
        "claude",
    ).wire()
    assert request["name"] == "Write"
    assert request["provider"] == "claude"
    assert [a["behavior"] for a in request["actions"]] == ["allow", "deny"]


def test_events_without_a_client_type_are_not_sent() -> None:
    assert translate.event({"type": "usage_updated", "provider": "claude"}) is None
    assert translate.event(tl({"type": "brand_new"})) is None
    started = translate.event(TURN).wire()
    assert started == {"type": "turn_started", "provider": "claude"}


def test_timeline_items_are_numbered_densely_and_turn_events_skipped() -> None:
    index = timeline.TimelineIndex(epoch="e1")
    rows = [
        index.add(entry(1, TURN)),
        index.add(entry(2, text("user_message", "hi"))),
        index.add(entry(3, TURN)),
        index.add(entry(4, text("assistant_message", "he"))),
        index.add(entry(5, text("assistant_message", "llo"))),
    ]
    assert [r.seq if r else None for r in rows] == [None, 1, None, 2, 3]
    # A live event already read from the durable copy keeps its number; older ones are ignored.
    again = index.add(entry(4, text("assistant_message", "he")))
    assert again is not None
    assert again.seq == 2
    assert index.add(entry(3, TURN)) is None
    assert index.window == (1, 3, 4)


def test_an_index_keeps_only_its_newest_rows_within_its_bytes() -> None:
    index = timeline.TimelineIndex(epoch="e1", budget=10_000)
    for n in range(1, 101):
        index.add(entry(n, text("user_message", f"{n} " + "x" * 1000)))
    # Every item is numbered; only the newest that fit the budget are kept (a window).
    assert index.count == 100
    assert 5 <= len(index.rows) <= 10
    assert index.kept_bytes <= 10_000
    low, high, following = index.window
    assert (high, following) == (100, 101)
    assert [r.seq for r in index.rows] == list(range(low, 101))
    assert len(index.by_source) == len(index.rows)
    # A row kept is found again by its source seq; a live entry past the window gets the next.
    kept = index.add(entry(100, text("user_message", "100")))
    assert kept is not None
    assert kept.seq == 100
    newest = index.add(entry(101, text("user_message", "y" * 50_000)))
    assert newest is not None
    assert newest.seq == 101
    # One row larger than the budget alone is still kept: the newest always stays.
    assert [r.seq for r in index.rows] == [101]
    assert index.window == (101, 101, 102)


def _index() -> timeline.TimelineIndex:
    index = timeline.TimelineIndex(epoch="e1")
    events = [
        text("user_message", "go"),
        text("reasoning", "th"),
        text("reasoning", "ink"),
        tool("c1", "running"),
        text("assistant_message", "a"),
        tool("c1", "completed", detail={"type": "other", "input": None}),
        text("assistant_message", "b"),
        text("assistant_message", "c"),
    ]
    for n, event in enumerate(events, start=1):
        index.add(entry(n * 2, event))
    return index


def test_the_projection_merges_chunks_and_a_tool_lifecycle() -> None:
    entries = timeline.project(_index().rows, "projected")
    shapes = [(e.item.type, e.seqStart, e.seqEnd, e.collapsed) for e in entries]
    assert shapes == [
        ("user_message", 1, 1, []),
        ("reasoning", 2, 3, ["reasoning_merge"]),
        ("tool_call", 4, 6, ["tool_lifecycle"]),
        ("assistant_message", 5, 5, []),
        ("assistant_message", 7, 8, ["assistant_merge"]),
    ]
    merged_tool = entries[2]
    assert merged_tool.item.status == "completed"
    # An unknown detail never replaces a known one.
    assert merged_tool.item.detail.type == "shell"
    assert [(r.startSeq, r.endSeq) for r in merged_tool.sourceSeqRanges] == [(4, 4), (6, 6)]
    assert entries[4].item.text == "bc"
    assert len(timeline.project(_index().rows, "canonical")) == 8


def test_windows_tail_before_after_and_their_flags() -> None:
    index = _index()
    tail = timeline.select(index, direction="tail", cursor=None, limit=2, projection="projected")
    assert [e.seqStart for e in tail.entries] == [5, 7]
    assert (tail.has_older, tail.has_newer, tail.reset) == (True, False, False)
    older = timeline.select(
        index,
        direction="before",
        cursor=ts.Cursor(epoch="e1", seq=5),
        limit=0,
        projection="canonical",
    )
    assert [e.seqStart for e in older.entries] == [1, 2, 3, 4]
    assert older.has_newer
    after = timeline.select(
        index,
        direction="after",
        cursor=ts.Cursor(epoch="e1", seq=6),
        limit=0,
        projection="canonical",
    )
    assert [e.seqStart for e in after.entries] == [7, 8]
    assert (after.has_older, after.has_newer) == (True, False)
    stale = timeline.select(
        index,
        direction="after",
        cursor=ts.Cursor(epoch="old", seq=3),
        limit=0,
        projection="canonical",
    )
    assert (stale.reset, stale.stale_cursor, len(stale.entries)) == (True, True, 8)
    nothing_new = timeline.select(
        index,
        direction="after",
        cursor=ts.Cursor(epoch="e1", seq=8),
        limit=0,
        projection="canonical",
    )
    assert (nothing_new.entries, nothing_new.has_older, nothing_new.has_newer) == ([], True, False)


RECORD = {
    "id": "agent-1",
    "provider": "claude",
    "cwd": "/w",
    "createdAt": "c",
    "updatedAt": "u",
    "lastStatus": "idle",
    "lastModeId": "plan",
    "config": {"model": "opus", "thinkingOptionId": "high"},
    "labels": {"k": "v"},
    "title": "main",
    "persistence": {"provider": "claude", "sessionId": "s1", "nativeHandle": None},
    "runtimeInfo": {"provider": "claude", "sessionId": "s1", "model": "opus"},
    "internal": False,
    "workspaceId": "w1",
}


def test_a_snapshot_joins_record_permissions_and_modes() -> None:
    modes = projection.modes([{"id": "plan", "label": "Plan"}, {"id": "default", "label": "Ask"}])
    snap = projection.snapshot(
        RECORD, pending=[{"id": "p", "title": "Write", "toolName": "Write"}], available_modes=modes
    ).wire()
    assert snap["model"] == "opus"
    assert snap["currentModeId"] == "plan"
    assert [m["id"] for m in snap["availableModes"]] == ["plan", "default"]
    assert snap["pendingPermissions"][0]["name"] == "Write"
    assert snap["persistence"] == {"provider": "claude", "sessionId": "s1"}
    assert set(snap["capabilities"]) == {
        "supportsStreaming",
        "supportsSessionPersistence",
        "supportsDynamicModes",
        "supportsMcpServers",
        "supportsReasoningStream",
        "supportsToolInvocations",
    }
    assert snap["lastUserMessageAt"] is None
    assert "archivedAt" not in snap
    assert "lastUsage" not in snap
    used = {**RECORD, "lastUsage": {"inputTokens": 7, "cachedInputTokens": 3, "costUsd": 0.5}}
    assert projection.snapshot(used).wire()["lastUsage"] == {
        "inputTokens": 7,
        "cachedInputTokens": 3,
        "totalCostUsd": 0.5,
    }


def test_placements_take_one_of_the_three_checkout_shapes() -> None:
    plain = projection.placement("/w/dir", None, None).wire()
    assert plain["checkout"]["isGit"] is False
    assert plain["projectKey"] == "/w/dir"
    assert plain["projectName"] == "dir"
    workspace = {
        "kind": "worktree",
        "cwd": "/wt",
        "branch": "b",
        "isPaseoOwnedWorktree": True,
        "mainRepoRoot": "/repo",
    }
    project = {"projectId": "p1", "projectKey": "key", "displayName": "Repo", "kind": "git"}
    owned = projection.placement("/wt", workspace, project).wire()
    assert owned["checkout"]["isPaseoOwnedWorktree"] is True
    assert owned["checkout"]["mainRepoRoot"] == "/repo"
    assert owned["projectName"] == "Repo"
    with pytest.raises(ValidationError):
        CheckoutGit(
            cwd="/x",
            currentBranch=None,
            remoteUrl=None,
            isPaseoOwnedWorktree=True,
            mainRepoRoot=None,
        )


def test_the_envelope_parses_in_and_validates_out() -> None:
    assert parse_frame('{"type":"ping"}').kind == "ping"
    session = parse_frame('{"type":"session","message":{"type":"x","requestId":"r"}}')
    assert session.body == {"type": "x", "requestId": "r"}
    for bad in ("nope", "[]", '{"type":"weird"}', '{"type":"session","message":{}}'):
        with pytest.raises(FrameError):
            parse_frame(bad)
    frame = json.loads(session_frame("rpc_error", out.RpcError(requestId="r", error="e", code="c")))
    assert isinstance(validate_outbound(frame), out.RpcError)
    with pytest.raises(ValueError, match="no model"):
        validate_outbound({"type": "session", "message": {"type": "made_up", "payload": {}}})


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"type": "hello", "clientId": "c", "clientType": "cli", "protocolVersion": 2}, 4003),
        ({"type": "hello", "clientId": " ", "clientType": "cli", "protocolVersion": 1}, 4002),
        ({"type": "hello", "clientId": "c", "clientType": "robot", "protocolVersion": 1}, 4002),
    ],
)
def test_a_bad_hello_names_its_close_code(body: dict[str, Any], code: int) -> None:
    with pytest.raises(handshake.HelloRefused) as refused:
        handshake.read_hello(body)
    assert refused.value.code == code


def test_server_info_says_it_serves_the_providers_snapshot() -> None:
    info = handshake.server_info("srv_x", "1.0").wire()
    assert info["status"] == "server_info"
    assert info["features"] == {"providersSnapshot": True}
