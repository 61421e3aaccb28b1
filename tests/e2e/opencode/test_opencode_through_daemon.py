"""The real pinned OpenCode through the real daemon and the real ``paseo`` CLI, against the fake.

One walk through an agent's life on one daemon (the steps build on each other): a text turn; a
file write that needs permission, allowed (the file exists) and denied (nothing is written); a
question from OpenCode's ``question`` tool answered with a chosen option, which the model then
reads, and one dismissed; an interrupt in the middle of a slow stream; a second turn whose model
request carries the first; the daemon killed with SIGKILL and restarted (the shared server
reaped at boot, the history intact, a new prompt resumes the OpenCode session on a new server);
``paseo daemon stop`` leaves nothing behind; nothing but the known npm attempt tried to leave
127.0.0.1 (see :mod:`e2e.opencode.conftest`), and that was refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import (
    TURN_TIMEOUT,
    RealDaemon,
    interrupt_mid_stream,
    item_type,
    logs,
    poll,
)
from e2e.opencode.env import opencode_env
from helpers.agents_env import agent_binary

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"


def request_with(fake: FakeModelServer, marker: str) -> str:
    """The body of the model request whose prompt holds ``marker`` ('' when none)."""
    for request in fake.model_requests():
        if marker in request.prompt:
            return request.body.decode("utf-8", "replace")
    return ""


def serve_processes(daemon: RealDaemon) -> list[Any]:
    return [p for p in daemon.processes() if "serve" in p.cmdline()]


def test_opencode_life_through_the_daemon(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    env = opencode_env(fake.url, tmp_path / "opencode")
    daemon.configure({"opencode": {"command": [str(agent_binary("opencode"))], "env": env}})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()

    providers = json.loads(daemon.cli("provider", "ls", "-o", "json").stdout)
    entry = next(p for p in providers if p["id"] == "opencode")
    assert entry["availability"]["status"] == "ready", entry

    ran = daemon.cli(
        "run", "--provider", "opencode", "--cwd", str(work), "--title", "main",
        "--wait-timeout", WAIT, "first-marker [[reply:hello from opencode]]",
    )  # fmt: skip
    assert ran.stdout == "hello from opencode\n"
    assert "finished (idle)" in ran.stderr
    record = json.loads(daemon.cli("inspect", "main", "-o", "json").stdout)["agent"]
    agent = record["id"]
    assert record["provider"] == "opencode"
    assert record["persistence"]["sessionId"].startswith("ses")
    assert len(serve_processes(daemon)) == 1

    # A write that needs permission (mode build), allowed: the file exists.
    asking = daemon.cli("send", "main", "[[write:allowed.txt:allowed-content]]", check=False)
    assert asking.returncode == 4, asking.stderr
    pending = json.loads(daemon.cli("permit", "ls", "-o", "json").stdout)
    assert [p["agentId"] for p in pending] == [agent]
    daemon.cli("permit", "allow", "main")
    daemon.cli("wait", "main", "--timeout", WAIT)
    assert (work / "allowed.txt").read_text().strip() == "allowed-content"

    # The same, denied: nothing is written.
    asking = daemon.cli("send", "main", "[[write:denied.txt:never]]", check=False)
    assert asking.returncode == 4, asking.stderr
    daemon.cli("permit", "deny", "main", "--message", "not this file")
    daemon.cli("wait", "main", "--timeout", WAIT)
    assert not (work / "denied.txt").exists()
    assert json.loads(daemon.cli("permit", "ls", "-o", "json").stdout) == []

    # OpenCode's question tool: `question.asked` becomes a request of kind question carrying
    # the questions; allowing it with answers replies with those labels, and the model's
    # next request holds them in the tool's result.
    question = {
        "questions": [
            {
                "question": "Which color?",
                "header": "Color",
                "options": [
                    {"label": "red", "description": "warm"},
                    {"label": "blue", "description": "cool"},
                ],
            }
        ]
    }
    ask = f"question-marker\nCALL_TOOL: question :: {json.dumps(question)}"
    asking = daemon.cli("send", "main", ask, check=False)
    assert asking.returncode == 4, asking.stderr
    (pending_question,) = json.loads(daemon.cli("permit", "ls", "-o", "json").stdout)
    assert pending_question["kind"] == "question"
    assert pending_question["title"] == "Which color?"
    assert pending_question["input"] == question
    daemon.cli("permit", "allow", "main", "--input", json.dumps({"answers": [["blue"]]}))
    daemon.cli("wait", "main", "--timeout", WAIT)
    replies = [e for e in logs(daemon, "main") if item_type(e) == "assistant_message"]
    assert '"Which color?"="blue"' in replies[-1]["event"]["item"]["text"], replies[-1]

    # Dismissed: OpenCode records the question as failed ("dismissed") and ends the turn.
    asking = daemon.cli("send", "main", ask.replace("question-marker", "dismissed"), check=False)
    assert asking.returncode == 4, asking.stderr
    daemon.cli("permit", "deny", "main")
    daemon.cli("wait", "main", "--timeout", WAIT)
    assert json.loads(daemon.cli("permit", "ls", "-o", "json").stdout) == []
    entries = logs(daemon, "main")
    kinds = [item_type(e) for e in entries]
    last_turn = entries[len(kinds) - 1 - kinds[::-1].index("user_message") :]
    calls = [e["event"]["item"] for e in last_turn if item_type(e) == "tool_call"]
    assert calls[-1]["name"] == "question"
    assert calls[-1]["status"] == "failed"
    assert "dismissed" in calls[-1]["error"]
    assert [e["event"]["type"] for e in last_turn].count("turn_completed") == 1

    # An interrupt in the middle of a slow stream: the run ends canceled, the stream is cut.
    interrupt_mid_stream(daemon, fake, agent)

    second = daemon.cli("send", "--wait-timeout", WAIT, "main", "second-marker [[reply:two]]")
    assert second.stdout == "two\n"
    assert "first-marker" in request_with(fake, "second-marker")

    # A crash: SIGKILL the daemon, start another; the shared server is reaped at boot and
    # OpenCode's stored session carries the history to a new one.
    before = logs(daemon, "main")
    old_servers = {p.pid for p in serve_processes(daemon)}
    daemon.kill()
    daemon.start()
    poll(
        lambda: not {p.pid for p in serve_processes(daemon)} & old_servers,
        timeout=30,
        what="the old server to be reaped",
    )
    assert logs(daemon, "main") == before
    resumed = daemon.cli("send", "--wait-timeout", WAIT, "main", "third-marker [[reply:three]]")
    assert resumed.stdout == "three\n"
    body = request_with(fake, "third-marker")
    assert "first-marker" in body
    assert "second-marker" in body
    after = logs(daemon, "main")
    assert after[: len(before)] == before
    seqs = [e["seq"] for e in after]
    assert seqs == sorted(set(seqs)), "timeline seq must keep increasing"

    stopped = daemon.stop()
    assert stopped.returncode == 0, stopped.stderr
    poll(lambda: not daemon.processes(), timeout=30, what="every process of the daemon to end")
    assert proxy.attempts == [], "something tried to leave 127.0.0.1"
