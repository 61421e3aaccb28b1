"""Who created which schedule and worktree: durable, private, and refusing when unreadable."""

from __future__ import annotations

import stat
from pathlib import Path

from paseo_mcp.owners import Owners


def test_owners_survive_a_restart_in_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp" / "owners.json"
    owners = Owners(path)
    owners.record("schedules", "sch1", "agt_a")
    owners.record("workspaces", "wks1", "agt_b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = Owners(path)
    assert again.owner("schedules", "sch1") == "agt_a"
    assert again.owner("workspaces", "wks1") == "agt_b"
    # Kinds are apart: a workspace id names no schedule.
    assert again.owner("schedules", "wks1") is None
    again.forget("schedules", "sch1")
    assert Owners(path).owner("schedules", "sch1") is None
    assert Owners(path).owner("workspaces", "wks1") == "agt_b"


def test_an_unreadable_file_makes_nothing_an_agents(tmp_path: Path) -> None:
    path = tmp_path / "owners.json"
    path.write_text("{not json")
    owners = Owners(path)
    assert owners.owner("schedules", "sch1") is None
    owners.record("schedules", "sch2", "agt_a")
    assert Owners(path).owner("schedules", "sch2") == "agt_a"
