"""The relationship's files are owner-only from creation and replaced atomically."""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
