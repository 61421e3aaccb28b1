"""Skills convergence on a temporary HOME: selection, updates, user edits, codex retirement."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from paseo.config.models import AllSkills, CustomSkills
from paseo.skills.bundle import bundled_skills, digest
from paseo.skills.install import MANIFEST
from paseo.skills.service import SkillsReport, SkillsService

SHIPPED = sorted(bundled_skills())


def _service(home: Path, selection: Any = None) -> SkillsService:
    chosen = selection or AllSkills(mode="all")
    config = SimpleNamespace(
        resolved=SimpleNamespace(agents=SimpleNamespace(skills=SimpleNamespace(selection=chosen)))
    )
    return SkillsService(config=config, home_dir=home)


def _sync(service: SkillsService) -> SkillsReport:
    return asyncio.run(service.sync())


def _states(report: SkillsReport, target: str) -> dict[str, str]:
    return {s.name: s.states[target] for s in report.skills}


def _paseo_wrote(skill_dir: Path, files: dict[str, bytes]) -> None:
    """Lay out ``files`` as an earlier Paseo version would have, manifest included."""
    skill_dir.mkdir(parents=True)
    for rel, data in files.items():
        (skill_dir / rel).write_bytes(data)
    manifest = {"files": {rel: digest(data) for rel, data in files.items()}}
    (skill_dir / MANIFEST).write_text(json.dumps(manifest))


def test_the_shipped_set_is_the_orchestration_skills() -> None:
    assert {"paseo", "handoff", "loop", "advisor"} <= set(SHIPPED)
    for skill in bundled_skills().values():
        assert skill.description, skill.name
        assert skill.files["SKILL.md"].startswith(f"---\nname: {skill.name}\n".encode())


def test_a_fresh_home_gets_every_skill_in_the_shared_and_claude_directories(
    tmp_path: Path,
) -> None:
    report = _sync(_service(tmp_path))
    for root in (".agents/skills", ".claude/skills"):
        for name in SHIPPED:
            assert (tmp_path / root / name / "SKILL.md").read_bytes() == (
                bundled_skills()[name].files["SKILL.md"]
            )
    assert set(_states(report, "agents").values()) == {"installed"}
    assert set(_states(report, "claude").values()) == {"installed"}
    assert set(_states(report, "codex").values()) == {"missing"}
    assert {a.action for a in report.actions} == {"installed"}
    assert not (tmp_path / ".codex").exists()
    # Converged: a second sync changes nothing.
    assert _sync(_service(tmp_path)).actions == []


def test_a_custom_selection_installs_only_those_and_retires_the_rest(tmp_path: Path) -> None:
    _sync(_service(tmp_path))
    custom = CustomSkills(mode="custom", skills=["paseo", "handoff", "nonexistent"])
    report = _sync(_service(tmp_path, custom))
    assert sorted(p.name for p in (tmp_path / ".agents/skills").iterdir()) == [
        "handoff",
        "paseo",
    ]
    assert sorted(p.name for p in (tmp_path / ".claude/skills").iterdir()) == [
        "handoff",
        "paseo",
    ]
    assert report.unknown == ["nonexistent"]
    assert {s.name for s in report.skills if s.selected} == {"handoff", "paseo"}
    assert _states(report, "agents")["loop"] == "missing"


def test_an_update_replaces_unchanged_files_and_keeps_a_user_edit(tmp_path: Path) -> None:
    shared = tmp_path / ".agents/skills"
    _paseo_wrote(shared / "paseo", {"SKILL.md": b"old paseo skill\n"})
    _paseo_wrote(shared / "loop", {"SKILL.md": b"old loop skill\n"})
    (shared / "loop" / "SKILL.md").write_bytes(b"old loop skill\nwith my own rule\n")
    service = _service(tmp_path)
    assert _states(asyncio.run(service.list_skills()), "agents")["paseo"] == "outdated"
    report = _sync(service)
    assert (shared / "paseo" / "SKILL.md").read_bytes() == bundled_skills()["paseo"].files[
        "SKILL.md"
    ]
    assert (shared / "loop" / "SKILL.md").read_bytes() == b"old loop skill\nwith my own rule\n"
    assert _states(report, "agents")["paseo"] == "installed"
    assert _states(report, "agents")["loop"] == "modified"
    kinds = {(a.skill, a.action) for a in report.actions if a.target == "agents"}
    assert ("paseo", "updated") in kinds
    assert ("loop", "kept") in kinds


def test_untracked_files_in_a_skill_directory_survive_sync_and_retirement(
    tmp_path: Path,
) -> None:
    _sync(_service(tmp_path))
    notes = tmp_path / ".claude/skills/advisor/notes.md"
    notes.write_text("mine")
    _sync(_service(tmp_path))
    assert notes.read_text() == "mine"
    _sync(_service(tmp_path, CustomSkills(mode="custom", skills=[])))
    assert notes.read_text() == "mine"
    assert not (tmp_path / ".claude/skills/advisor/SKILL.md").exists()
    assert not (tmp_path / ".claude/skills/paseo").exists()


def test_unchanged_copies_in_codex_skills_are_retired_and_edits_kept(tmp_path: Path) -> None:
    codex = tmp_path / ".codex/skills"
    _paseo_wrote(codex / "paseo", {"SKILL.md": b"an older paseo skill\n"})
    _paseo_wrote(codex / "loop", {"SKILL.md": b"an older loop skill\n", "extra.md": b"x"})
    (codex / "loop" / "SKILL.md").write_bytes(b"edited by the user\n")
    # A copy identical to what Paseo ships, written before manifests existed.
    (codex / "handoff").mkdir()
    (codex / "handoff" / "SKILL.md").write_bytes(bundled_skills()["handoff"].files["SKILL.md"])
    (codex / "someone-elses").mkdir()
    (codex / "someone-elses" / "SKILL.md").write_text("not ours")
    report = _sync(_service(tmp_path))
    assert not (codex / "paseo").exists()
    assert not (codex / "handoff").exists()
    assert (codex / "loop" / "SKILL.md").read_text() == "edited by the user\n"
    assert not (codex / "loop" / "extra.md").exists()
    assert (codex / "someone-elses" / "SKILL.md").read_text() == "not ours"
    assert _states(report, "codex") == {
        "advisor": "missing",
        "handoff": "missing",
        "loop": "modified",
        "paseo": "missing",
    }


def test_syncs_are_serialized(tmp_path: Path) -> None:
    service = _service(tmp_path)

    async def both() -> list[SkillsReport]:
        return list(await asyncio.gather(service.sync(), service.sync()))

    first, second = asyncio.run(both())
    assert len([a for a in first.actions + second.actions if a.action == "installed"]) == (
        2 * len(SHIPPED)
    )


@pytest.mark.parametrize("content", ["not json", json.dumps({"files": [1, 2]})])
def test_an_unreadable_manifest_reads_as_nothing_written(tmp_path: Path, content: str) -> None:
    skill_dir = tmp_path / ".agents/skills/paseo"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("my own paseo skill")
    (skill_dir / MANIFEST).write_text(content)
    _sync(_service(tmp_path))
    assert (skill_dir / "SKILL.md").read_text() == "my own paseo skill"
