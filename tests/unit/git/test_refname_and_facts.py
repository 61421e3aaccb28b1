"""Ref-name rules (checked against git itself) and in-process repository facts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from paseo_hookspecs.errors import InvalidParams

from paseo.git.facts import normalize_remote, read_facts
from paseo.git.refname import branch_name_problem, validate_branch_name

NAMES = [
    "main",
    "feature/x",
    "a..b",
    "x.lock",
    "x.lock/y",
    "-flag",
    "has space",
    "end/",
    "/start",
    "a//b",
    "x.",
    ".hidden",
    "a/.b",
    "a@{b",
    "HEAD",
    "@",
    "ti~lde",
    "ca^ret",
    "co:lon",
    "que?",
    "st*r",
    "br[acket",
    "back\\slash",
    "ctl\x01",
    "del\x7f",
    "ünïcode",
    "a.b/c-d_e",
    "v1.2.3",
    "refs/heads/x",
    "a@b",
    "@{",
    "dots...",
    "x/y.lock.z",
]


@pytest.mark.parametrize("name", NAMES)
def test_branch_rules_match_git(name: str) -> None:
    result = subprocess.run(
        ["git", "check-ref-format", "--branch", name], capture_output=True, check=False
    )
    # `--branch @` expands the @ shorthand rather than judging a branch named "@"; creating
    # `refs/heads/@` is allowed, which is what we check.
    git_accepts = result.returncode == 0 or name == "@"
    assert (branch_name_problem(name) is None) == git_accepts, name


def test_validate_branch_name_says_why() -> None:
    with pytest.raises(InvalidParams, match=r"'\.\.'"):
        validate_branch_name("a..b")
    assert validate_branch_name("ok/name") == "ok/name"


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("git@github.com:Owner/Repo.git", "remote:github.com/Owner/Repo"),
        ("https://github.com/Owner/Repo", "remote:github.com/Owner/Repo"),
        ("https://user@GitHub.com:443/Owner/Repo.git/", "remote:github.com/Owner/Repo"),
        (
            "ssh://git@gitlab.example.com:2222/group/sub/repo.git",
            "remote:gitlab.example.com/group/sub/repo",
        ),
        ("/srv/git/repo.git", "remote:/srv/git/repo"),
    ],
)
def test_remote_normalization(url: str, key: str) -> None:
    assert normalize_remote(url) == key


def test_facts_of_a_linked_worktree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main", "repo")
    git("-C", "repo", "commit", "-q", "--allow-empty", "-m", "x")
    git("-C", "repo", "remote", "add", "origin", "git@github.com:o/r.git")
    git("-C", "repo", "worktree", "add", "-q", "-b", "side", "../wt")
    (tmp_path / "wt" / "sub").mkdir()
    facts = read_facts(str(tmp_path / "wt" / "sub"))
    assert facts is not None
    assert facts.toplevel == str(tmp_path / "wt")
    assert facts.is_linked_worktree
    assert facts.branch == "side"
    assert facts.main_repo_root == str(tmp_path / "repo")
    assert facts.remote_url == "git@github.com:o/r.git"
    main = read_facts(str(tmp_path / "repo"))
    assert main is not None
    assert not main.is_linked_worktree
    assert main.branch == "main"
    assert read_facts(str(tmp_path)) is None
