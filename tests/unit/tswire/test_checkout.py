"""The checkout panel's requests translated to ``git.*``: the method and parameters each
becomes, the daemon's error codes mapped to the TypeScript ``CheckoutError`` codes, and the
diff subscriptions' watch (a real ``watchfiles`` watch on a temporary tree) ending when the
session closes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from paseo_tswire import dispatch
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.envelope import session_frame, validate_outbound
from paseo_tswire.handlers import checkout_diff, checkout_watch
from paseo_tswire.models.wire import Wire


class Daemon:
    """``call`` answers from ``answers`` (a callable, a value or an RpcFailure) and records
    each call; ``push`` keeps each frame, validated as the client would."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.frames: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}
        self.closers: list[Any] = []
        self.pushed = asyncio.Event()

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.calls.append((method, params or {}))
        answer = self.answers[method]
        if isinstance(answer, RpcFailure):
            raise answer
        return answer(params) if callable(answer) else answer

    async def push(self, type_: str, payload: Wire) -> None:
        frame = json.loads(session_frame(type_, payload))
        validate_outbound(frame)
        self.frames.append(frame["message"])
        self.pushed.set()


def _one(daemon: Daemon, body: dict[str, Any]) -> dict[str, Any]:
    asyncio.run(dispatch.handle(daemon, body))  # type: ignore[arg-type]
    assert len(daemon.frames) == 1
    return daemon.frames.pop()


def test_push_publishes_a_new_branch_and_commit_stages_everything() -> None:
    daemon = Daemon(
        {
            "git.push": {"cwd": "/r", "upstream": "origin/f"},
            "git.commit": {"cwd": "/r", "commit": "a" * 40, "summary": "m"},
        }
    )
    pushed = _one(daemon, {"type": "checkout_push_request", "requestId": "r1", "cwd": "/r"})
    assert pushed["payload"] == {"cwd": "/r", "success": True, "error": None, "requestId": "r1"}
    _one(
        daemon,
        {"type": "checkout_commit_request", "requestId": "r2", "cwd": "/r", "message": " m "},
    )
    assert daemon.calls == [
        ("git.push", {"cwd": "/r", "setUpstream": True}),
        ("git.commit", {"cwd": "/r", "message": "m", "all": True}),
    ]


def test_daemon_errors_become_checkout_error_codes() -> None:
    codes = {
        "merge_conflict": "MERGE_CONFLICT",
        "not_git_repo": "NOT_GIT_REPO",
        "access_denied": "NOT_ALLOWED",
        "no_upstream": "UNKNOWN",
    }
    for daemon_code, wire_code in codes.items():
        failure = RpcFailure(daemon_code, f"said {daemon_code}")
        daemon = Daemon({"git.mergeFromBase": failure})
        answer = _one(
            daemon, {"type": "checkout_merge_from_base_request", "requestId": "r", "cwd": "/r"}
        )
        assert answer["payload"]["error"] == {"code": wire_code, "message": f"said {daemon_code}"}
        assert daemon.calls == [("git.mergeFromBase", {"cwd": "/r", "requireClean": True})]


def test_an_empty_commit_message_is_generated_or_the_typescript_fallback() -> None:
    commit = {"cwd": "/r", "commit": "c", "summary": "S"}
    body = {"type": "checkout_commit_request", "requestId": "r", "cwd": "/r", "addAll": True}
    generated = Daemon(
        {
            "metadata.commit-message": {"generated": True, "subject": "S", "body": "B"},
            "git.commit": commit,
        }
    )
    _one(generated, body)
    assert generated.calls[-1] == ("git.commit", {"cwd": "/r", "message": "S\n\nB", "all": True})
    for answer in ({"generated": False}, RpcFailure("unavailable", "no agent")):
        fallback = Daemon({"metadata.commit-message": answer, "git.commit": commit})
        assert _one(fallback, body)["payload"]["success"] is True
        assert fallback.calls[-1][1]["message"] == "Update files"


def test_a_not_git_status_is_the_plain_not_git_shape() -> None:
    daemon = Daemon({"git.status": RpcFailure("not_git_repo", "/p is not in a git checkout")})
    answer = _one(daemon, {"type": "checkout_status_request", "requestId": "r", "cwd": "/p"})
    assert (answer["payload"]["isGit"], answer["payload"]["error"]) == (False, None)
    denied = Daemon({"git.status": RpcFailure("access_denied", "outside the home directory")})
    answer = _one(denied, {"type": "checkout_status_request", "requestId": "r", "cwd": "/p"})
    assert answer["payload"]["error"]["code"] == "NOT_ALLOWED"


def test_the_watch_filter_keeps_working_files_and_the_git_index() -> None:
    root = "/r"
    assert checkout_watch.wanted(root, "/r/src/a.py")
    assert checkout_watch.wanted(root, "/r/.git/index")
    assert checkout_watch.wanted(root, "/r/.git/HEAD")
    assert not checkout_watch.wanted(root, "/r/.git/objects/ab/cdef")
    assert not checkout_watch.wanted(root, "/r/web/node_modules/x/index.js")


def test_a_subscription_pushes_on_change_and_ends_with_the_session(tmp_path: Path) -> None:
    version = {"n": 0}

    def diff(_params: Any) -> dict[str, Any]:
        version["n"] += 1
        files = [
            {
                "path": p.name,
                "isNew": True,
                "isDeleted": False,
                "additions": 1,
                "deletions": 0,
                "status": "ok",
                "hunks": [],
            }
            for p in sorted(tmp_path.iterdir())
        ]
        return {"cwd": str(tmp_path), "files": files}

    daemon = Daemon({"git.status": {"repoRoot": str(tmp_path)}, "git.diff": diff})

    async def scenario() -> None:
        body = {
            "type": "subscribe_checkout_diff_request",
            "requestId": "r",
            "cwd": str(tmp_path),
            "subscriptionId": "s",
            "compare": {"mode": "uncommitted"},
        }
        await dispatch.handle(daemon, body)  # type: ignore[arg-type]
        assert daemon.frames[0]["type"] == "subscribe_checkout_diff_response"
        room = daemon.extra[checkout_diff.ROOM]
        watch = room.watches["s"]
        daemon.pushed.clear()
        # The watch may take a moment to be in place: write until an update arrives (bounded).
        for attempt in range(40):
            (tmp_path / f"f{attempt}.txt").write_text("x\n")
            try:
                await asyncio.wait_for(daemon.pushed.wait(), 0.5)
                break
            except TimeoutError:
                continue
        update = daemon.frames[-1]
        assert update["type"] == "checkout_diff_update"
        assert update["payload"]["files"]
        tasks = list(watch.tasks)
        assert len(tasks) == 2  # the refresher and the watcher
        for closer in daemon.closers:
            await closer()
        assert room.watches == {}
        assert all(task.done() for task in tasks)

    asyncio.run(asyncio.wait_for(scenario(), 60))
