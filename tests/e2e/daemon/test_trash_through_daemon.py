"""The trash through the real daemon, the real ``paseo`` CLI and real Claude Code behind the
fake model server.

One turn, ``paseo delete``: the agent leaves ``ls`` and its process ends, ``paseo trash ls``
holds it. ``paseo trash restore``: it is listed again with its whole history, and a second turn
resumes the Claude session (the model request carries the first turn). Then the permanent
removal: ``paseo trash empty --yes`` purges it while its run directory cannot be removed (the
cleanup fails and stays queued), the daemon is SIGKILLed, and the next daemon finishes the
queued cleanup on its own once the obstacle is gone, without touching the agent's cwd.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import (
    TURN_TIMEOUT,
    RealDaemon,
    poll,
    processes_of_agents,
    provider_settings,
)

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"


def _json(daemon: RealDaemon, *args: str) -> Any:
    return json.loads(daemon.cli(*args, "-o", "json").stdout)


def _logs(daemon: RealDaemon, agent: str) -> list[dict[str, Any]]:
    out = daemon.cli("logs", agent, "-o", "json").stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _request_with(fake: FakeModelServer, marker: str) -> str:
    for request in fake.model_requests():
        if marker in request.prompt:
            return request.body.decode("utf-8", "replace")
    raise AssertionError(f"no model request carried {marker!r}")


def test_delete_restore_resume_and_purge(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    (work / "keep.txt").write_text("the user's project\n")

    ran = daemon.cli(
        "run",
        "--provider",
        "claude",
        "--cwd",
        str(work),
        "--title",
        "main",
        "--wait-timeout",
        WAIT,
        "first-marker [[reply:one]]",
    )
    assert ran.stdout == "one\n"
    agent = _json(daemon, "inspect", "main")["agent"]["id"]
    history = _logs(daemon, "main")
    assert processes_of_agents({agent})

    # Delete: out of every listing, its program stopped, kept in the trash.
    daemon.cli("delete", "main")
    assert [a["id"] for a in _json(daemon, "ls", "-a")] == []
    poll(lambda: not processes_of_agents({agent}), timeout=30, what="the agent's program to end")
    trashed = _json(daemon, "trash", "ls")
    assert [e["agent"]["id"] for e in trashed["agents"]] == [agent]
    assert trashed["agents"][0]["agent"]["deletedAt"]
    assert trashed["retentionDays"] == 30
    assert daemon.cli("logs", "main", check=False).returncode != 0

    # Restore: listed again with its whole history; the next turn resumes the conversation.
    restored = _json(daemon, "trash", "restore", "main")
    assert restored["id"] == agent
    assert restored.get("deletedAt") is None
    assert [a["id"] for a in _json(daemon, "ls")] == [agent]
    assert _logs(daemon, "main") == history
    assert _json(daemon, "trash", "ls")["agents"] == []
    resumed = daemon.cli("send", "--wait-timeout", WAIT, "main", "second-marker [[reply:two]]")
    assert resumed.stdout == "two\n"
    assert "first-marker" in _request_with(fake, "second-marker")
    after = _logs(daemon, "main")
    assert after[: len(history)] == history
    seqs = [e["seq"] for e in after]
    assert seqs == sorted(set(seqs))

    # Purge with a cleanup that cannot finish: its run directory's parent is a file.
    daemon.cli("delete", "main")
    runs = daemon.home / "agent-runs"
    runs.write_text("in the way\n")
    refused = daemon.cli("trash", "empty", check=False)
    assert refused.returncode == 2
    assert "--yes" in refused.stderr
    emptied = _json(daemon, "trash", "empty", "--yes")
    assert emptied["purged"] == [agent]
    assert emptied["failed"] == 1
    listing = _json(daemon, "trash", "ls")
    assert listing["agents"] == []
    [queued] = listing["cleanup"]
    assert (queued["agentId"], queued["attempts"]) == (agent, 1)

    # A crash with the cleanup still queued; the next daemon finishes it once it can.
    daemon.kill()
    runs.unlink()
    (runs / agent).mkdir(parents=True)
    (runs / agent / "sidecar.json").write_text("{}")
    daemon.start()
    poll(
        lambda: _json(daemon, "trash", "ls")["cleanup"] == [],
        timeout=60,
        what="the queued cleanup to finish after the restart",
    )
    assert not (runs / agent).exists()
    assert (work / "keep.txt").read_text() == "the user's project\n"
    assert daemon.cli("inspect", agent, check=False).returncode != 0
    stopped = daemon.stop()
    assert stopped.returncode == 0, stopped.stderr
    assert proxy.attempts == []
