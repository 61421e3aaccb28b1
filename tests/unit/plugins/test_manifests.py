"""The declarative provider manifest."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from paseo_hookspecs.errors import InvalidParams

from paseo.plugins.manifests import (
    manifest_toml,
    missing_bins,
    package_json_manifest,
    parse_manifest,
    pyproject_manifest,
)

PROVIDER = {"id": "my-acp", "label": 'My "ACP" agent', "bin": "my-agent", "env": {"A B": "c\\d"}}


def test_valid_manifest_round_trips_through_toml(tmp_path: Path) -> None:
    manifest = parse_manifest({"providers": [PROVIDER]}, "test")
    (tmp_path / "pyproject.toml").write_text(manifest_toml(manifest))
    assert tomllib.loads(manifest_toml(manifest))["tool"]["paseo"] == {"providers": [PROVIDER]}
    assert pyproject_manifest(tmp_path) == manifest
    assert manifest.to_json() == {"providers": [PROVIDER]}


@pytest.mark.parametrize(
    "data",
    [
        {"providers": [{**PROVIDER, "id": "Not Valid"}]},
        {"providers": [{**PROVIDER, "bin": ""}]},
        {"providers": [{**PROVIDER, "bin": "../outside.js"}]},
        {"providers": [{**PROVIDER, "bin": "/usr/bin/env"}]},
        {"providers": [{**PROVIDER, "typo": 1}]},
        {"providers": [{**PROVIDER, "env": {"A": 1}}]},
        {"providers": [PROVIDER, PROVIDER]},
        {"providers": "nope"},
    ],
)
def test_invalid_manifests(data: object) -> None:
    with pytest.raises(InvalidParams, match="invalid plugin manifest"):
        parse_manifest(data, "test")


def test_package_json_manifest(tmp_path: Path) -> None:
    assert package_json_manifest(tmp_path) is None
    (tmp_path / "package.json").write_text(json.dumps({"name": "x"}))
    assert package_json_manifest(tmp_path) is None
    (tmp_path / "package.json").write_text(json.dumps({"name": "x", "paseo": {"providers": []}}))
    manifest = package_json_manifest(tmp_path)
    assert manifest is not None
    assert manifest.providers == []


def test_missing_bins(tmp_path: Path) -> None:
    manifest = parse_manifest(
        {
            "providers": [
                {"id": "a", "label": "A", "bin": "linked"},
                {"id": "b", "label": "B", "bin": "bin/run.js"},
                {"id": "d", "label": "D", "bin": "absent"},
                {"id": "e", "label": "E", "bin": "bin/absent.js"},
            ]
        },
        "test",
    )
    package = tmp_path / "node_modules" / "pkg"
    (package / "bin").mkdir(parents=True)
    (package / "bin" / "run.js").write_text("")
    (tmp_path / "node_modules" / ".bin").mkdir()
    (tmp_path / "node_modules" / ".bin" / "linked").write_text("")
    assert missing_bins(manifest, tmp_path, package) == ["absent", "bin/absent.js"]
