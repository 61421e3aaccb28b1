"""Each provider's real agent program through the real daemon and the real ``paseo`` CLI.

One test per provider walks an agent through its life on one daemon (the steps depend on each
other, and a daemon per step would multiply the start-up cost on a small CI machine): a text
turn; a file write that needs permission, allowed (the file exists) and denied (nothing is
written); an interrupt in the middle of a slow stream (the run ends canceled and the model
stream is cut); a second turn whose model request carries the first; five agents at once; the
daemon killed with SIGKILL and restarted (no orphan survives, the history is intact, a new
prompt resumes the provider session and the timeline continues with increasing seq); and after
``paseo daemon stop`` no process the daemon started is left. Nothing may try to leave
127.0.0.1: the refusing proxy must stay untouched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import (
    MODEL_BACKED,
    PERMISSION_MODES,
    TURN_TIMEOUT,
    RealDaemon,
    interrupt_mid_stream,
    item_type,
    logs,
    poll,
    processes_of_agents,
    provider_settings,
)

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

PROVIDERS = ("claude", "codex", "claude-acp", "py-acp")
WAIT = f"{TURN_TIMEOUT:.0f}s"


def conversation_has(
    provider: str, fake: FakeModelServer, state: Path, prompt_marker: str, *earlier: str
) -> bool:
    """Whether what the agent sent for the prompt holding ``prompt_marker`` carried every
    ``earlier`` text: the fake's recorded model request, or for the Python ACP agent (which
    calls no model) its stored session history."""
    if provider in MODEL_BACKED:
        for request in fake.model_requests():
            if prompt_marker in request.prompt:
                body = request.body.decode("utf-8", "replace")
                return all(text in body for text in earlier)
        return False
    for path in (state / "acp-state").glob("*.json"):
        history = path.read_text()
        if prompt_marker in history:
            return all(text in history for text in earlier)
    return False


def run_concurrently(daemon: RealDaemon, commands: list[list[str]]) -> list[dict[str, Any]]:
    """Start every ``paseo`` command at once; their ``-o json`` results, in order."""
    env = {**os.environ, "PASEO_HOME": str(daemon.home)}
    running = [
        subprocess.Popen(
            [sys.executable, "-m", "paseo", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    results = []
    for args, process in zip(commands, running, strict=True):
        out, err = process.communicate(timeout=TURN_TIMEOUT * 2)
        assert process.returncode == 0, f"paseo {' '.join(args)} exited {process.returncode}\n{err}"
        results.append(json.loads(out))
    return results


@pytest.mark.parametrize("provider", PROVIDERS)
def test_agent_life_through_the_daemon(
    provider: str,
    daemon: RealDaemon,
    fake: FakeModelServer,
    proxy: RefusingProxy,
    tmp_path: Path,
) -> None:
    state = tmp_path / "programs" / provider
    daemon.configure({provider: provider_settings(provider, fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    mode = PERMISSION_MODES.get(provider)
    mode_args = ["--mode", mode] if mode else []

    # A text turn: `paseo run` prints the reply, says how the run ended.
    ran = daemon.cli(
        "run",
        "--provider",
        provider,
        "--cwd",
        str(work),
        "--title",
        "main",
        "--wait-timeout",
        WAIT,
        *mode_args,
        "first-marker [[reply:hello from the agent]]",
    )
    assert ran.stdout == "hello from the agent\n"
    assert "finished (idle)" in ran.stderr
    record = json.loads(daemon.cli("inspect", "main", "-o", "json").stdout)["agent"]
    agent = record["id"]
    assert record["provider"] == provider
    assert record["lastStatus"] == "idle"
    assert record["persistence"]["provider"] == provider

    # A write that needs permission, allowed: the file exists.
    asking = daemon.cli("send", "main", "[[write:allowed.txt:allowed-content]]", check=False)
    assert asking.returncode == 4, asking.stderr
    assert "paseo permit allow" in asking.stderr
    pending = json.loads(daemon.cli("permit", "ls", "-o", "json").stdout)
    assert [p["agentId"] for p in pending] == [agent]
    daemon.cli("permit", "allow", "main")
    daemon.cli("wait", "main", "--timeout", WAIT)
    assert (work / "allowed.txt").read_text().strip() == "allowed-content"

    # The same, denied: nothing is written, the agent hears why and carries on.
    asking = daemon.cli("send", "main", "[[write:denied.txt:never]]", check=False)
    assert asking.returncode == 4, asking.stderr
    daemon.cli("permit", "deny", "main", "--message", "not this file")
    daemon.cli("wait", "main", "--timeout", WAIT)
    assert not (work / "denied.txt").exists()
    assert json.loads(daemon.cli("permit", "ls", "-o", "json").stdout) == []

    # An interrupt in the middle of a slow stream: the run ends canceled.
    interrupt_mid_stream(daemon, fake if provider in MODEL_BACKED else None, agent)

    # A second turn on the same session: the model hears the first one.
    second = daemon.cli("send", "--wait-timeout", WAIT, "main", "second-marker [[reply:two]]")
    assert second.stdout == "two\n"
    assert conversation_has(provider, fake, state, "second-marker", "first-marker")

    # Five agents at once.
    results = run_concurrently(
        daemon,
        [
            [
                "run",
                "-o",
                "json",
                "--provider",
                provider,
                "--cwd",
                str(work),
                "--wait-timeout",
                WAIT,
                *mode_args,
                f"[[reply:parallel-{n}]]",
            ]
            for n in range(5)
        ],
    )
    assert [(r["outcome"], r["lastMessage"]) for r in results] == [
        ("idle", f"parallel-{n}") for n in range(5)
    ]
    agents = {agent, *(r["agentId"] for r in results)}
    assert len(agents) == 6
    # Each has its own live program (their sessions stay up between turns).
    for one in agents:
        assert processes_of_agents({one}), f"agent {one} has no live process"

    # A crash: SIGKILL the daemon, start another. Orphans are reaped at boot, every agent is
    # closed with its history intact, and a new prompt resumes the provider session.
    before = logs(daemon, "main")
    daemon.kill()
    daemon.start()
    poll(lambda: not processes_of_agents(agents), timeout=30, what="orphans to be reaped")
    listed = json.loads(daemon.cli("ls", "-o", "json").stdout)
    assert {a["id"]: a["lastStatus"] for a in listed} == dict.fromkeys(agents, "closed")
    assert logs(daemon, "main") == before
    resumed = daemon.cli("send", "--wait-timeout", WAIT, "main", "third-marker [[reply:three]]")
    assert resumed.stdout == "three\n"
    assert conversation_has(provider, fake, state, "third-marker", "first-marker", "second-marker")
    after = logs(daemon, "main")
    assert after[: len(before)] == before
    assert {e["epoch"] for e in after} == {before[0]["epoch"]}
    seqs = [e["seq"] for e in after]
    assert seqs == sorted(set(seqs)), "timeline seq must keep increasing"
    assert "turn_completed" in [item_type(e) for e in after[len(before) :]]
    # The resume refilled nothing: the program's history holds only what Paseo recorded
    # (interrupted and denied turns included), so the only new messages are the new turn's.
    new_messages = [
        (item_type(e), e["event"]["item"]["text"])
        for e in after[len(before) :]
        if item_type(e) in ("user_message", "assistant_message")
    ]
    assert {kind for kind, _ in new_messages} == {"user_message", "assistant_message"}
    assert [text for kind, text in new_messages if kind == "user_message"] == [
        "third-marker [[reply:three]]"
    ], new_messages
    assert "".join(text for kind, text in new_messages if kind == "assistant_message") == "three"

    # Shutdown leaves nothing behind.
    stopped = daemon.stop()
    assert stopped.returncode == 0, stopped.stderr
    poll(lambda: not daemon.processes(), timeout=30, what="every process of the daemon to end")
    assert processes_of_agents(agents) == []
    assert proxy.attempts == [], "something tried to leave 127.0.0.1"
