"""How the built-in sources read their specs (no I/O)."""

from __future__ import annotations

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_plugin_sources import git, npm, pypi


@pytest.mark.parametrize(
    ("spec", "url", "ref"),
    [
        ("git+https://h/org/r.git", "https://h/org/r.git", None),
        ("git+https://h/org/r.git@v1.2", "https://h/org/r.git", "v1.2"),
        ("ssh://git@h/org/r.git", "ssh://git@h/org/r.git", None),
        ("git+ssh://git@h/org/r.git@0123abcd", "ssh://git@h/org/r.git", "0123abcd"),
        ("git+file:///srv/r.git@main", "file:///srv/r.git", "main"),
    ],
)
def test_git_specs(spec: str, url: str, ref: str | None) -> None:
    assert git.split_spec(spec) == (url, ref)


@pytest.mark.parametrize(
    "spec", ["git+http://h/r.git", "git+git://h/r.git", "git+ftp://h/r", "git+/srv/r.git"]
)
def test_git_refuses_other_schemes(spec: str) -> None:
    with pytest.raises(InvalidParams, match="only"):
        git.split_spec(spec)


def test_npm_and_pypi_specs() -> None:
    assert npm.split_spec("npm:@acme/x@^1") == ("@acme/x@^1", False)
    assert npm.split_spec("npm+scripts:x") == ("x", True)
    assert pypi.split_spec("pypi:paseo-x>=1") == "paseo-x>=1"
    for bad in ("npm:", "pypi: "):
        with pytest.raises(InvalidParams):
            (npm.split_spec if bad.startswith("npm") else pypi.split_spec)(bad)
