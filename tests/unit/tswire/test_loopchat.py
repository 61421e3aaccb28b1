"""``chat/*`` and ``loop/*`` translated to the chat and loops plugins' RPC methods: the method
and parameters each request becomes, the records narrowed to the TypeScript schemas, and each
refusal answered ``rpc_error`` with the TypeScript code."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from paseo_loops.records import add_log, new_iteration, new_loop
from paseo_tswire import dispatch
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.envelope import session_frame, validate_outbound
from paseo_tswire.models.wire import Wire

ROOT = Path(__file__).resolve().parents[3]
ROOM = {
    "id": "516b7161-8738-4a33-a3cf-eba98c684a3e",
    "name": "wire-room",
    "purpose": "wire capture",
    "createdAt": "2026-12-01T23:07:05.141Z",
    "updatedAt": "2026-12-01T23:07:05.141Z",
    "messageCount": 0,
    "lastMessageAt": None,
}
MESSAGE = {
    "id": "b4d169d1",
    "roomId": ROOM["id"],
    "authorAgentId": "manual",
    "body": "hello @everyone",
    "replyToMessageId": None,
    "mentionAgentIds": ["everyone"],
    "createdAt": "2026-12-01T23:09:37.013Z",
}


def _loop() -> dict[str, Any]:
    """A record as the loops plugin builds it, with its own bookkeeping fields."""
    loop = new_loop(
        prompt="p",
        cwd="/tmp",
        name="wire-loop",
        provider="claude",
        model=None,
        verifier_provider=None,
        verifier_model=None,
        verify_prompt=None,
        verify_checks=["test -f done.txt"],
        archive=False,
        sleep_ms=1000,
        max_iterations=2,
        max_time_ms=None,
    )
    loop["iterations"].append(new_iteration(1))
    loop["activeIteration"] = 1
    add_log(loop, "Starting iteration 1.", iteration=1)
    return loop


class Daemon:
    """The session's two sides these handlers use: ``call`` answers from ``answers`` (or raises
    the :class:`RpcFailure` there) and records each call; ``push`` keeps each frame, checked
    against the outbound models as the client would."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.frames: list[dict[str, Any]] = []

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.calls.append((method, params or {}))
        answer = self.answers[method]
        if isinstance(answer, RpcFailure):
            raise answer
        return answer

    async def push(self, type_: str, payload: Wire) -> None:
        frame = json.loads(session_frame(type_, payload))
        validate_outbound(frame)
        self.frames.append(frame["message"])


def _run(daemon: Daemon, body: dict[str, Any]) -> dict[str, Any]:
    asyncio.run(dispatch.handle(daemon, body))  # type: ignore[arg-type]
    assert len(daemon.frames) == 1
    return daemon.frames[0]


def test_chat_requests_become_chat_methods_with_their_fields() -> None:
    daemon = Daemon(
        {
            "chat.create": {"room": ROOM},
            "chat.post": {"message": MESSAGE},
            "chat.read": {"messages": [MESSAGE], "hasMore": False},
            "chat.wait": {"messages": [], "timedOut": True},
        }
    )
    created = _run(daemon, {"type": "chat/create", "requestId": "r1", "name": "wire-room"})
    assert created == {
        "type": "chat/create/response",
        "payload": {"requestId": "r1", "room": ROOM, "error": None},
    }
    daemon.frames.clear()
    posted = _run(
        daemon,
        {"type": "chat/post", "requestId": "r2", "room": "wire-room", "body": "hi", "x": 1},
    )
    assert posted["payload"]["message"] == MESSAGE
    daemon.frames.clear()
    read = _run(
        daemon,
        {"type": "chat/read", "requestId": "r3", "room": "wire-room", "limit": 5},
    )
    # hasMore is this daemon's paging, not in the TypeScript answer.
    assert read["payload"] == {"requestId": "r3", "messages": [MESSAGE], "error": None}
    daemon.frames.clear()
    waited = _run(
        daemon,
        {"type": "chat/wait", "requestId": "r4", "room": "wire-room", "timeoutMs": 2000},
    )
    assert waited["payload"] == {"requestId": "r4", "messages": [], "timedOut": True, "error": None}
    assert daemon.calls == [
        ("chat.create", {"name": "wire-room"}),
        ("chat.post", {"room": "wire-room", "body": "hi"}),
        ("chat.read", {"room": "wire-room", "limit": 5}),
        ("chat.wait", {"room": "wire-room", "timeoutMs": 2000}),
    ]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("chat_room_name_taken", "chat_room_name_taken"),
        ("chat_room_not_found", "chat_room_not_found"),
        ("chat_message_not_found", "chat_message_not_found"),
        ("invalid_params", "chat_request_failed"),
    ],
)
def test_a_chat_refusal_is_an_rpc_error_with_the_typescript_code(code: str, expected: str) -> None:
    daemon = Daemon({"chat.create": RpcFailure(code, "Chat room already exists with name: X")})
    answer = _run(daemon, {"type": "chat/create", "requestId": "r1", "name": "X"})
    assert answer == {
        "type": "rpc_error",
        "payload": {
            "requestId": "r1",
            "requestType": "chat/create",
            "error": "Chat room already exists with name: X",
            "code": expected,
        },
    }


def test_loop_requests_become_loop_methods_and_records_are_narrowed() -> None:
    loop = _loop()
    assert "rerunAfterRestart" in loop["iterations"][0]
    daemon = Daemon(
        {
            "loop.run": {"loop": loop},
            "loop.logs": {"loop": loop, "entries": loop["logs"], "nextSeq": 2},
            "loop.list": {"loops": [loop]},
        }
    )
    ran = _run(
        daemon,
        {
            "type": "loop/run",
            "requestId": "r1",
            "prompt": "p",
            "cwd": "/tmp",
            "verifyChecks": ["test -f done.txt"],
            "name": "wire-loop",
            "sleepMs": 1000,
            "maxIterations": 2,
        },
    )
    record = ran["payload"]["loop"]
    assert "rerunAfterRestart" not in record["iterations"][0]
    assert record["iterations"][0]["index"] == 1
    assert record["logs"][-1]["text"] == "Starting iteration 1."
    daemon.frames.clear()
    logs = _run(daemon, {"type": "loop/logs", "requestId": "r2", "id": loop["id"]})
    assert logs["payload"]["nextCursor"] == 2
    assert [e["seq"] for e in logs["payload"]["entries"]] == [1]
    daemon.frames.clear()
    listed = _run(daemon, {"type": "loop/list", "requestId": "r3"})
    assert listed["payload"]["loops"] == [
        {
            "id": loop["id"],
            "name": "wire-loop",
            "status": "running",
            "cwd": "/tmp",
            "createdAt": loop["createdAt"],
            "updatedAt": loop["updatedAt"],
            "activeIteration": 1,
        }
    ]
    assert daemon.calls[0] == (
        "loop.run",
        {
            "prompt": "p",
            "cwd": "/tmp",
            "verifyChecks": ["test -f done.txt"],
            "name": "wire-loop",
            "sleepMs": 1000,
            "maxIterations": 2,
        },
    )
    assert daemon.calls[1] == ("loop.logs", {"id": loop["id"], "afterSeq": 0})


@pytest.mark.parametrize("code", ["invalid_params", "not_found", "conflict"])
def test_every_loop_refusal_is_loop_request_failed(code: str) -> None:
    message = "Loop requires --verify or at least one --verify-check"
    daemon = Daemon({"loop.run": RpcFailure(code, message)})
    answer = _run(daemon, {"type": "loop/run", "requestId": "r1", "prompt": "p", "cwd": "/"})
    assert answer["payload"] == {
        "requestId": "r1",
        "requestType": "loop/run",
        "error": message,
        "code": "loop_request_failed",
    }


def _unknown_schema_section() -> str:
    text = (ROOT / "docs" / "ts-clients.md").read_text()
    start = text.index("## What answers `unknown_schema`")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def test_the_documented_unknown_schema_list_names_no_answered_request() -> None:
    section = _unknown_schema_section()
    named = set(re.findall(r"`([a-z_/]+)`", section))
    prefixes = {n.rstrip("*") for n in re.findall(r"`([a-z_/]+\*)`", section)}
    answered = set(dispatch.TABLE)
    assert named & answered == set()
    assert {t for t in answered for p in prefixes if t.startswith(p)} == set()
    assert {"chat/create", "loop/run"} <= answered
    # The git and checkout panel left the list when it was served.
    assert {
        "checkout_status_request",
        "subscribe_checkout_diff_request",
        "unsubscribe_checkout_diff_request",
        "checkout_commit_request",
        "checkout_merge_request",
        "checkout_merge_from_base_request",
        "checkout_pull_request",
        "checkout_push_request",
        "checkout_switch_branch_request",
        "checkout_pr_create_request",
        "checkout_pr_status_request",
        "stash_save_request",
        "stash_pop_request",
        "stash_list_request",
        "validate_branch_request",
        "branch_suggestions_request",
        "pull_request_timeline_request",
        "github_search_request",
    } <= answered
    # So did the files, editors and workspace panels.
    assert {
        "file_explorer_request",
        "file_download_token_request",
        "project_icon_request",
        "list_available_editors_request",
        "open_in_editor_request",
        "directory_suggestions_request",
        "create_paseo_worktree_request",
        "workspace_setup_status_request",
        "start_workspace_script_request",
    } <= answered


def test_a_record_s_levels_and_exit_codes_outside_the_typescript_schema_are_mapped() -> None:
    loop = _loop()
    add_log(loop, "Iteration 1 failed: x", iteration=1, level="warn")
    loop["iterations"][0]["verifyChecks"].append(
        {
            "command": "sleep 999",
            "exitCode": None,
            "passed": False,
            "stdout": "",
            "stderr": "timed out",
            "startedAt": loop["createdAt"],
            "completedAt": loop["createdAt"],
        }
    )
    daemon = Daemon({"loop.inspect": {"loop": loop}})
    answer = _run(daemon, {"type": "loop/inspect", "requestId": "r1", "id": loop["id"]})
    record = answer["payload"]["loop"]
    assert record["logs"][-1]["level"] == "error"
    assert record["iterations"][0]["verifyChecks"][0]["exitCode"] == -1
