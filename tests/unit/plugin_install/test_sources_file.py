"""``plugins/sources.json``: kind and remote only, old fields accepted, other entries kept."""

from __future__ import annotations

import json
from pathlib import Path

from paseo_hookspecs.records import GitPluginSource, NpmPluginSource

from paseo.plugin_install.sources_file import (
    PypiPluginSource,
    delete_source,
    put_source,
    read_sources,
)

OLD = {
    # Written by an older version: no kind, plus selector/revision copies now ignored.
    "legacy": {"remote": "https://example.com/x.git", "selector": "main", "revision": "abc"},
    "from-npm": {"kind": "npm", "package": "@acme/x"},
    "future": {"kind": "cargo", "crate": "x"},
    "broken": {"kind": "git"},
}


def test_old_fields_are_accepted_and_unknown_entries_survive_writes(tmp_path: Path) -> None:
    path = tmp_path / "sources.json"
    path.write_text(json.dumps(OLD))
    records = read_sources(path)
    legacy = records["legacy"]
    assert isinstance(legacy, GitPluginSource)
    assert (legacy.kind, legacy.remote) == ("git", "https://example.com/x.git")
    assert isinstance(records["from-npm"], NpmPluginSource)
    assert set(records) == {"legacy", "from-npm"}

    put_source(path, "new", PypiPluginSource(kind="pypi", remote="paseo-x>=1"))
    written = json.loads(path.read_text())
    assert written["new"] == {"kind": "pypi", "remote": "paseo-x>=1"}
    for key, value in OLD.items():
        assert written[key] == value

    assert delete_source(path, "new") is True
    assert delete_source(path, "new") is False
    assert json.loads(path.read_text()) == OLD


def test_git_records_always_carry_their_kind(tmp_path: Path) -> None:
    path = tmp_path / "plugins" / "sources.json"
    put_source(path, "x", GitPluginSource(remote="file:///r.git"))
    assert json.loads(path.read_text()) == {"x": {"kind": "git", "remote": "file:///r.git"}}
    assert read_sources(tmp_path / "missing.json") == {}
