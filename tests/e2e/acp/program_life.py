"""One agent's life through the real daemon and CLI, for the built-in ACP programs
(``copilot``, ``omp``): the steps of ``e2e/daemon/test_agents_through_daemon.py`` less its five
concurrent agents (these programs are slow to start on a small machine; the conformance suite
covers concurrency).

A text turn; a write that needs permission, allowed (the file exists) and denied (nothing is
written); an interrupt in the middle of a slow stream; a second turn whose model request
carries the first; the daemon killed with SIGKILL and restarted (the orphan is reaped, the
history is intact, a new prompt resumes the session with its history); ``paseo daemon stop``
leaves no process; nothing tried to leave 127.0.0.1 but the hosts the program is known to try.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from e2e.daemon.harness import (
    TURN_TIMEOUT,
    RealDaemon,
    interrupt_mid_stream,
    logs,
    poll,
    processes_of_agents,
)

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

WAIT = f"{TURN_TIMEOUT:.0f}s"


def conversation_has(fake: FakeModelServer, prompt_marker: str, *earlier: str) -> bool:
    """Whether the model request for the prompt holding ``prompt_marker`` carried ``earlier``."""
    for request in fake.model_requests():
        if prompt_marker in request.prompt:
            body = request.body.decode("utf-8", "replace")
            return all(text in body for text in earlier)
    return False


def walk_agent_life(
    *,
    daemon: RealDaemon,
    fake: FakeModelServer,
    proxy: RefusingProxy,
    tmp_path: Path,
    provider: str,
    settings: dict[str, Any],
    mode: str | None,
    write_prompt: Callable[[str, str], str],
    known_hosts: Iterable[str] = (),
) -> None:
    """Run every step of the module docstring on ``provider`` configured with ``settings``."""
    daemon.configure({provider: settings})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    mode_args = ["--mode", mode] if mode else []

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
    assert (record["provider"], record["persistence"]["provider"]) == (provider, provider)

    asking = daemon.cli("send", "main", write_prompt("allowed.txt", "allowed-content"), check=False)
    assert asking.returncode == 4, asking.stderr
    assert "paseo permit allow" in asking.stderr
    daemon.cli("permit", "allow", "main")
    daemon.cli("wait", "main", "--timeout", WAIT)
    assert (work / "allowed.txt").read_text().strip() == "allowed-content"

    asking = daemon.cli("send", "main", write_prompt("denied.txt", "never"), check=False)
    assert asking.returncode == 4, asking.stderr
    daemon.cli("permit", "deny", "main", "--message", "not this file")
    daemon.cli("wait", "main", "--timeout", WAIT)
    assert not (work / "denied.txt").exists()
    assert json.loads(daemon.cli("permit", "ls", "-o", "json").stdout) == []

    interrupt_mid_stream(daemon, fake, agent)

    second = daemon.cli("send", "--wait-timeout", WAIT, "main", "second-marker [[reply:two]]")
    assert second.stdout == "two\n"
    assert conversation_has(fake, "second-marker", "first-marker")

    before = logs(daemon, "main")
    daemon.kill()
    daemon.start()
    poll(lambda: not processes_of_agents({agent}), timeout=30, what="the orphan to be reaped")
    listed = json.loads(daemon.cli("ls", "-o", "json").stdout)
    assert [(a["id"], a["lastStatus"]) for a in listed] == [(agent, "closed")]
    assert logs(daemon, "main") == before
    resumed = daemon.cli("send", "--wait-timeout", WAIT, "main", "third-marker [[reply:three]]")
    assert resumed.stdout == "three\n"
    assert conversation_has(fake, "third-marker", "first-marker", "second-marker")
    after = logs(daemon, "main")
    assert after[: len(before)] == before
    seqs = [e["seq"] for e in after]
    assert seqs == sorted(set(seqs)), "timeline seq must keep increasing"

    stopped = daemon.stop()
    assert stopped.returncode == 0, stopped.stderr
    poll(lambda: not daemon.processes(), timeout=30, what="every process of the daemon to end")
    assert proxy.unexpected(known_hosts) == [], "something tried to leave 127.0.0.1"
