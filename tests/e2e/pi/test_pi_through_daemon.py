"""The real pinned Pi through the real daemon and the real ``paseo`` CLI, against the fake.

One walk through an agent's life on one daemon (the steps build on each other): a text turn; a
file write, which Pi runs without asking (the file exists, the timeline shows the tool call and
no permission is pending); an interrupt in the middle of a slow stream; a second turn whose
model request carries the first; the daemon killed with SIGKILL and restarted (no orphan, the
history intact, a new prompt resumes Pi's session file); ``paseo daemon stop`` leaves nothing
behind; nothing tried to leave 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.daemon.harness import (
    TURN_TIMEOUT,
    RealDaemon,
    interrupt_mid_stream,
    item_type,
    logs,
    poll,
    processes_of_agents,
)
from e2e.pi.env import pi_env
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


def test_pi_life_through_the_daemon(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    daemon.configure(
        {"pi": {"command": [str(agent_binary("pi"))], "env": pi_env(fake.url, tmp_path / "pi")}}
    )
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()

    providers = json.loads(daemon.cli("provider", "ls", "-o", "json").stdout)
    pi = next(p for p in providers if p["id"] == "pi")
    assert pi["availability"]["status"] == "ready", pi

    ran = daemon.cli(
        "run", "--provider", "pi", "--cwd", str(work), "--title", "main",
        "--wait-timeout", WAIT, "first-marker [[reply:hello from pi]]",
    )  # fmt: skip
    assert ran.stdout == "hello from pi\n"
    assert "finished (idle)" in ran.stderr
    record = json.loads(daemon.cli("inspect", "main", "-o", "json").stdout)["agent"]
    agent = record["id"]
    assert record["provider"] == "pi"
    assert record["persistence"]["nativeHandle"].endswith(".jsonl")

    # Pi never asks: the write runs, the timeline shows it, nothing is pending.
    wrote = daemon.cli("send", "--wait-timeout", WAIT, "main", "[[write:pi.txt:pi-content]]")
    assert wrote.returncode == 0, wrote.stderr
    assert (work / "pi.txt").read_text() == "pi-content"
    assert json.loads(daemon.cli("permit", "ls", "-o", "json").stdout) == []
    calls = [e["event"]["item"] for e in logs(daemon, "main") if item_type(e) == "tool_call"]
    assert [(c["name"], c["status"]) for c in calls][-1] == ("write", "completed")

    # An interrupt in the middle of a slow stream: the run ends canceled, the stream is cut.
    interrupt_mid_stream(daemon, fake, agent)

    second = daemon.cli("send", "--wait-timeout", WAIT, "main", "second-marker [[reply:two]]")
    assert second.stdout == "two\n"
    assert "first-marker" in request_with(fake, "second-marker")

    # A crash: SIGKILL the daemon, start another; Pi's session file carries the history.
    before = logs(daemon, "main")
    daemon.kill()
    daemon.start()
    poll(lambda: not processes_of_agents({agent}), timeout=30, what="orphans to be reaped")
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
