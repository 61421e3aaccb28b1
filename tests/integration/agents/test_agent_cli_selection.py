"""Agent selection and the daemon aliases of the real ``paseo`` CLI against the real daemon:
``delete``/``stop`` with ``--all`` or ``--cwd``, ``archive --force``, ``logs --since``, and the
top-level ``start``/``status``/``stop`` of the daemon group."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def paseo(agent_daemon: LiveDaemon, run_paseo: Run) -> Run:
    def run(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
        return run_paseo(*args, env={"PASEO_HOME": str(agent_daemon.home)}, **options)

    return run


def _agent(paseo: Run, cwd: Path, prompt: str = "hi", *extra: str) -> str:
    return str(
        paseo(
            "run", "-q", *extra, "--provider", "scripted", "--cwd", str(cwd), prompt, check=True
        ).stdout.strip()
    )


def _ids(paseo: Run) -> set[str]:
    return set(paseo("ls", "-a", "-q", check=True).stdout.split())


def test_delete_and_stop_select_by_cwd_or_all(paseo: Run, tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    first, second, other = _agent(paseo, here), _agent(paseo, here), _agent(paseo, there)

    nothing = paseo("delete")
    assert nothing.returncode == 2
    assert "give an agent ID, --all or --cwd DIR" in nothing.stderr
    both = paseo("delete", first, "--all")
    assert both.returncode == 2

    stopped = json.loads(paseo("stop", "--cwd", str(here), "-o", "json", check=True).stdout)
    assert {agent["id"] for agent in stopped} == {first, second}
    assert {agent["lastStatus"] for agent in stopped} == {"closed"}
    record = json.loads(paseo("inspect", other, "-o", "json", check=True).stdout)["agent"]
    assert record["lastStatus"] == "idle"

    deleted = paseo("delete", "--cwd", str(here), check=True)
    assert sorted(deleted.stdout.splitlines()) == sorted(
        [f"deleted {first[:8]}", f"deleted {second[:8]}"]
    )
    assert _ids(paseo) == {other}
    none_left = paseo("delete", "--cwd", str(here), check=True)
    assert none_left.stdout == ""
    assert "no agent matched" in none_left.stderr

    paseo("archive", other, check=True)
    kept = _agent(paseo, there)
    gone = json.loads(paseo("delete", "--all", "-o", "json", check=True).stdout)
    assert gone == [{"id": kept, "deleted": True}]
    assert _ids(paseo) == {other}, "archived agents are not in --all"


def test_archive_refuses_a_running_agent_unless_forced(paseo: Run, workdir: Path) -> None:
    running = _agent(paseo, workdir, "[[slow:60]] long", "-d")
    refused = paseo("archive", running)
    assert refused.returncode == 1
    assert "is running" in refused.stderr
    assert "--force" in refused.stderr
    assert running in _ids(paseo)
    assert paseo("ls", "-q", check=True).stdout.strip() == running
    forced = json.loads(paseo("archive", "--force", running, "-o", "json", check=True).stdout)
    assert forced["archivedAt"] is not None
    assert forced["lastStatus"] == "closed"
    assert paseo("ls", "-q", check=True).stdout == ""
    idle = _agent(paseo, workdir)
    assert paseo("archive", idle, check=True).stdout == f"archived {idle[:8]}\n"


def test_logs_since_a_duration_or_a_time(paseo: Run, workdir: Path) -> None:
    agent = _agent(paseo, workdir, "remember me")
    recent = paseo("logs", agent, "--since", "1h", check=True).stdout
    assert recent.splitlines()[0] == "> remember me"
    assert paseo("logs", agent, "--since", "2999-01-01T00:00:00+00:00", check=True).stdout == ""
    since_then = paseo("logs", agent, "--since", "2000-01-01T00:00", "-o", "json", check=True)
    everything = paseo("logs", agent, "-o", "json", check=True)
    assert since_then.stdout == everything.stdout
    tail = paseo("logs", agent, "--since", "1h", "--tail", "1", "-o", "json", check=True)
    assert json.loads(tail.stdout)["event"]["type"] == "attention_required"
    bad = paseo("logs", agent, "--since", "yesterday")
    assert bad.returncode == 2
    assert "not a duration or a time" in bad.stderr


def test_top_level_daemon_aliases(paseo: Run, workdir: Path) -> None:
    status = json.loads(paseo("status", "-o", "json", check=True).stdout)
    long_form = json.loads(paseo("daemon", "status", "-o", "json", check=True).stdout)
    assert status["running"] is True
    assert (status["pid"], status["home"]) == (long_form["pid"], long_form["home"])
    agent = _agent(paseo, workdir)
    mixed = paseo("stop", agent, "--force")
    assert mixed.returncode == 2
    assert "are for stopping the daemon" in mixed.stderr
    # Under the agent group, naming no agent is a usage error, never the daemon's stop.
    assert paseo("agent", "stop").returncode == 2
    # As in the TypeScript CLI, `paseo stop` is about agents: naming none is ambiguous, refused.
    ambiguous = paseo("stop")
    assert ambiguous.returncode == 2
    assert "`paseo daemon stop` stops the daemon" in ambiguous.stderr
    assert json.loads(paseo("status", "-o", "json", check=True).stdout)["running"] is True
    assert paseo("daemon", "stop", check=True).stdout == "paseo daemon stopped\n"
    not_running = paseo("status", "-o", "json")
    assert not_running.returncode == 3
    assert json.loads(not_running.stdout)["running"] is False
    assert paseo("daemon", "stop", check=True).stdout == "paseo daemon is not running\n"
    started = json.loads(paseo("start", "-o", "json", check=True).stdout)
    restarted = json.loads(paseo("restart", "-o", "json", check=True).stdout)
    assert restarted["pid"] != started["pid"]
    assert json.loads(paseo("status", "-o", "json", check=True).stdout)["pid"] == restarted["pid"]
