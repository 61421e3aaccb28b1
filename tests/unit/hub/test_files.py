"""The relationship's files are owner-only from creation and replaced atomically."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from paseo_hookspecs.atomic import sweep_temp_files
from paseo_hub import files


def test_a_new_file_is_0600_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "state" / "hub-relationship.json"
    previous = os.umask(0)
    try:
        files.write_json(path, {"secret": "s"})
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert files.read_json(path) == {"secret": "s"}
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_replacement_is_a_new_0600_file(tmp_path: Path) -> None:
    path = tmp_path / "hub-relationship.json"
    path.write_text("{}")
    path.chmod(0o644)
    files.write_json(path, {"state": "active"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert files.read_json(path) == {"state": "active"}


def test_remove_and_read_tolerate_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "gone.json"
    assert files.read_json(path) is None
    files.remove(path)
    assert not path.exists()


def test_the_sweep_removes_only_the_targets_temporary_files(tmp_path: Path) -> None:
    ours = tmp_path / ".hub-relationship.json.0123456789ab.tmp"
    ours.write_text("secret")
    kept = [
        tmp_path / "hub-relationship.json",
        tmp_path / ".agents.json.0123456789ab.tmp",  # another writer's, in the shared home
        tmp_path / ".hub-relationship.json.notes",
    ]
    for path in kept:
        path.write_text("{}")
    directory = tmp_path / ".hub-resume-intents.json.0123456789ab.tmp"
    directory.mkdir()  # not a file: never removed
    targets = ("hub-relationship.json", "hub-resume-intents.json")
    assert sweep_temp_files(tmp_path, targets) == 1
    assert not ours.exists()
    assert all(path.exists() for path in kept)
    assert directory.is_dir()
    assert sweep_temp_files(tmp_path / "missing", targets) == 0
