"""The real web app's session, replayed: every request the app sent to this daemon in a
headless-Chromium run of ``scripts/app-browser-check.py`` on 2026-12-02 (opening the workspace,
its diff, a commit, a branch switch, the file explorer, the add-project dialog, a
``paseo.json`` script run in a terminal, settings),
recorded in ``fixtures/app-session.jsonl``, is
sent again in order to a real daemon over TCP with an app token, as the app connected.

Every frame the daemon answers is validated against the transport's strict models of the app's
zod schemas (:class:`~client.TsClient`), each request must get an answer of the type the app
got in the recorded run (and fail where it failed, nowhere else), and what the app did must land
on disk: a commit in ``git log``, the branch switched, the script's output (and, in a
recording that has one, a worktree).

Why a recording and not the app itself: building the app (its npm workspace install and an
``expo export``) takes tens of minutes and the network; the browser run is the documented
manual check (docs/ts-clients.md, "Browser check"), and its frames were also checked against the
app's own zod schemas there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.tswire.app_script import Bindings, git, load, make_project, request_id
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon
from helpers.waiting import wait_for

from paseo.testing.fake_model import RefusingProxy

FIXTURE = Path(__file__).parent / "fixtures" / "app-session.jsonl"
SLOW = {
    "create_paseo_worktree_request",
    "checkout_commit_request",
    "start_workspace_script_request",
}
IGNORED = {"ping", "pong"}
"""Keep-alives: answered by the transport at once, their timing is the browser's."""


def _recorded_answers(script: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    answers: dict[str, dict[str, Any]] = {}
    for item in script:
        if item["dir"] == "received":
            rid = request_id(item["frame"])
            if rid is not None and rid not in answers:
                answers[rid] = item["frame"]["message"]
    return answers


def _failed(message: dict[str, Any]) -> bool:
    payload = message.get("payload") or {}
    return message["type"] == "rpc_error" or bool(payload.get("error"))


@pytest.fixture
def app_daemon(tmp_path: Path) -> Any:
    with RefusingProxy() as proxy:
        daemon = TsDaemon(tmp_path, proxy)
        daemon.write_config()
        repo = make_project(tmp_path, tmp_path / "daemon-home")
        daemon.start()
        try:
            daemon.cli("workspace", "open", str(repo))
            token = daemon.cli("daemon", "token", "create", "--name", "replay").stdout.strip()
            yield daemon, repo, token
        finally:
            daemon.cleanup()


def test_the_apps_recorded_session_gets_the_same_answers(app_daemon: Any, tmp_path: Path) -> None:
    daemon, repo, token = app_daemon
    script = load(FIXTURE)
    answers = _recorded_answers(script)
    bindings = Bindings(str(tmp_path))
    sent = [item["frame"] for item in script if item["dir"] == "sent"]
    assert sent[0]["type"] == "hello", "a recording starts with the app's hello"
    kinds: dict[str, int] = {}
    with TsClient(uri=daemon.tcp_uri, subprotocols=[f"paseo.bearer.{token}"]) as app:
        for recorded in sent:
            if recorded.get("type") in IGNORED:
                continue
            frame = bindings.apply(recorded)
            app.send(frame)
            if frame["type"] == "hello":
                info = app.wait_for(
                    lambda m: m["type"] == "status" and m["payload"]["status"] == "server_info"
                )
                assert info["payload"]["capabilities"]["voice"]["dictation"] is not None
                continue
            rid = request_id(frame)
            expected = answers.get(rid or "")
            if expected is None:
                continue  # no answer was awaited (or it came after the recording ended)
            kind = frame["message"]["type"]
            live = app.wait_for(
                lambda m, rid=rid: (m.get("payload") or {}).get("requestId") == rid,
                timeout=120 if kind in SLOW else 30,
            )
            assert live["type"] == expected["type"], (kind, live)
            assert _failed(live) == _failed(expected), (kind, live, expected)
            bindings.learn(expected, live)
            kinds[kind] = kinds.get(kind, 0) + 1
    # Every frame received was validated by the client; what the app did is on disk.
    worktrees = git(repo, "worktree", "list").splitlines()
    if kinds.get("checkout_commit_request"):
        assert int(git(repo, "rev-list", "--count", "--all").strip()) >= 2
    if kinds.get("checkout_switch_branch_request"):
        assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "feature/other"
    if kinds.get("create_paseo_worktree_request"):
        assert len(worktrees) == 2, worktrees
    if kinds.get("start_workspace_script_request"):
        places = [Path(line.split()[0]) for line in worktrees]
        wait_for(
            lambda: any((p / "script-ran.txt").exists() for p in places),
            timeout=60,
            what="the stamp script",
        )
    assert len(kinds) >= 10, json.dumps(kinds)


def test_the_recording_holds_no_machine_specific_value() -> None:
    """The fixture names its directory and the daemon's ids only by placeholder (a replay on
    another machine fills them), and holds no credential."""
    text = FIXTURE.read_text(encoding="utf-8")
    assert "/tmp/" not in text
    assert "/root/" not in text
    assert "/home/" not in text
    assert "paseo.bearer." not in text
    assert "password" not in text
