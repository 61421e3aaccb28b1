"""``paseo skills ls | sync`` through the real daemon; the test's ``HOME`` is ``~``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon

RunPaseo = Any


@pytest.fixture
def user_home() -> Path:
    return Path(os.environ["HOME"])


def _start(paseo_home: Path, config: dict[str, object] | None = None) -> LiveDaemon:
    paseo_home.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (paseo_home / "config.json").write_text(json.dumps(config))
    return start_daemon(paseo_home)


@pytest.fixture
def daemons(paseo_home: Path) -> Iterator[list[LiveDaemon]]:
    started: list[LiveDaemon] = []
    try:
        yield started
    finally:
        for live in started:
            stop_daemon(live.home)
            kill_leftover(live.pid)


def _ls(run_paseo: RunPaseo) -> dict[str, dict[str, object]]:
    result = run_paseo("skills", "ls", "--json", check=True)
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_the_daemon_installs_every_skill_and_ls_reads_the_files(
    paseo_home: Path, user_home: Path, daemons: list[LiveDaemon], run_paseo: RunPaseo
) -> None:
    daemons.append(_start(paseo_home))
    skills = _ls(run_paseo)
    assert {"paseo", "handoff", "loop", "advisor"} <= set(skills)
    for name, row in skills.items():
        assert row["selected"] is True
        assert row["targets"] == {"agents": "installed", "claude": "installed", "codex": "missing"}
        assert (user_home / ".agents/skills" / name / "SKILL.md").is_file()
        assert (user_home / ".claude/skills" / name / "SKILL.md").is_file()
    table = run_paseo("skills", "ls", check=True).stdout
    header = ["NAME", "SELECTED", "~/.agents", "~/.claude", "~/.codex"]
    assert table.splitlines()[0].split() == header


def test_sync_keeps_a_user_edit_and_follows_a_custom_selection(
    paseo_home: Path, user_home: Path, daemons: list[LiveDaemon], run_paseo: RunPaseo
) -> None:
    skill_md = user_home / ".agents/skills/loop/SKILL.md"
    custom = {"agents": {"skills": {"selection": {"mode": "custom", "skills": ["loop"]}}}}
    daemons.append(_start(paseo_home, custom))
    assert _ls(run_paseo)["loop"]["targets"]["agents"] == "installed"
    skill_md.write_text(skill_md.read_text() + "\nMy own rule.\n")
    result = json.loads(run_paseo("skills", "sync", "--json", check=True).stdout)
    assert {"skill": "loop", "target": "agents", "path": str(skill_md), "action": "kept"} in (
        result["actions"]
    )
    assert skill_md.read_text().endswith("My own rule.\n")
    skills = {row["name"]: row for row in result["skills"]}
    assert skills["loop"]["targets"]["agents"] == "modified"
    assert skills["paseo"]["selected"] is False
    assert skills["paseo"]["targets"]["agents"] == "missing"
    assert not (user_home / ".agents/skills/paseo").exists()
    # Converged: another sync only says the edit is still kept.
    again = run_paseo("skills", "sync", check=True).stdout.splitlines()
    assert [line.split()[:2] for line in again[1:]] == [["kept", "loop"]]


def test_sync_with_nothing_to_do_says_so(
    paseo_home: Path, daemons: list[LiveDaemon], run_paseo: RunPaseo
) -> None:
    daemons.append(_start(paseo_home))
    run_paseo("skills", "sync", check=True)
    assert run_paseo("skills", "sync", check=True).stdout == "skills are up to date\n"
