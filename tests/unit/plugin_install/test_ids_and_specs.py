"""Plugin ids and the classification of install sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.plugin_sources import GitPluginRepo, plugin_files
from paseo_hookspecs.errors import Conflict, InvalidParams

from paseo.plugin_install import canonical_spec, default_plugin_id, validate_plugin_id
from paseo.plugin_install.ids import check_not_builtin


@pytest.mark.parametrize("plugin_id", ["a", "hello", "my-agent-2", "0day"])
def test_valid_ids(plugin_id: str) -> None:
    assert validate_plugin_id(plugin_id) == plugin_id


@pytest.mark.parametrize("plugin_id", ["", "-x", "Hello", "a_b", "a.b", "../x", "a/b", "x" * 65])
def test_invalid_ids(plugin_id: str) -> None:
    with pytest.raises(InvalidParams):
        validate_plugin_id(plugin_id)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("@acme/My_Agent", "my-agent"),
        ("paseo-hello", "paseo-hello"),
        ("https://example.com/org/Repo.git", "repo"),
        ("--weird--", "weird"),
    ],
)
def test_default_ids(name: str, expected: str) -> None:
    assert default_plugin_id(name) == expected


def test_default_id_needs_something_usable() -> None:
    with pytest.raises(InvalidParams, match="--id"):
        default_plugin_id("@@@")


def test_builtin_ids_are_reserved() -> None:
    with pytest.raises(Conflict):
        check_not_builtin("sqlite", allow_shadow=False)
    check_not_builtin("sqlite", allow_shadow=True)
    check_not_builtin("not-a-builtin", allow_shadow=False)


def test_explicit_specs_pass_through(tmp_path: Path) -> None:
    assert canonical_spec("npm:@acme/agent@^1", tmp_path) == "npm:@acme/agent@^1"
    assert canonical_spec("pypi:paseo-x>=1", tmp_path) == "pypi:paseo-x>=1"
    assert canonical_spec("git+https://h/r.git@v1", tmp_path) == "git+https://h/r.git@v1"


def test_urls_become_git_specs(tmp_path: Path) -> None:
    assert canonical_spec("https://h/r.git", tmp_path) == "git+https://h/r.git"
    # Refusing a scheme is the git source's job; it gets to say why.
    assert canonical_spec("http://h/r.git", tmp_path) == "git+http://h/r.git"
    with pytest.raises(InvalidParams, match="scp-style"):
        canonical_spec("git@github.com:org/repo.git", tmp_path)


def test_local_paths_are_classified(tmp_path: Path) -> None:
    repo = GitPluginRepo(tmp_path / "remote")
    sha = repo.commit(plugin_files(1), "one")
    (tmp_path / "pkg.tgz").write_bytes(b"")
    (tmp_path / "x-1.0-py3-none-any.whl").write_bytes(b"")
    plain = tmp_path / "plain"
    plain.mkdir()

    assert canonical_spec(str(repo.bare), tmp_path) == f"git+{repo.bare.as_uri()}"
    assert canonical_spec(f"{repo.work}@{sha}", tmp_path) == f"git+{repo.work.as_uri()}@{sha}"
    assert canonical_spec("pkg.tgz", tmp_path) == f"npm:{tmp_path / 'pkg.tgz'}"
    assert canonical_spec("./x-1.0-py3-none-any.whl", tmp_path) == (
        f"pypi:{tmp_path / 'x-1.0-py3-none-any.whl'}"
    )
    assert canonical_spec("plain", tmp_path) == f"directory:{plain}"
    assert canonical_spec("directory:plain", tmp_path) == f"directory:{plain}"
    with pytest.raises(InvalidParams, match="not a Git repository"):
        canonical_spec("plain@v1", tmp_path)
    with pytest.raises(InvalidParams, match="no such file"):
        canonical_spec("./missing", tmp_path)
    with pytest.raises(InvalidParams, match="cannot tell"):
        canonical_spec("some-name", tmp_path)
