"""Checkpoints and undo through the real daemon, the real ``paseo`` CLI and real Claude Code
(``bypassPermissions``: it writes without asking) behind the fake model server.

The agent works in a git checkout where the user has a commit, a stash, a staged file and an
untracked note. Turn 1 writes a new file with Claude's Write tool; turn 2 changes a tracked file
and adds another through its Bash tool. ``paseo diff --turn 1`` is exactly turn 1's change;
``paseo undo --turn 2`` then ``--turn 1`` restore the files, ``--redo`` brings turn 1's back;
an undo while the agent works is refused. Throughout, HEAD, the index, the stash and the
branches are as the user left them, and the user's own files survive. An agent outside a git
tree says so in ``paseo checkpoints``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, timeout=30
    ).stdout


def user_state(repo: Path) -> dict[str, str]:
    return {
        "HEAD": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "index": git(repo, "ls-files", "-s"),
        "staged": git(repo, "diff", "--cached"),
        "refs": git(repo, "for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
        "stash": git(repo, "stash", "list"),
        "config": (repo / ".git" / "config").read_text(),
    }


def user_repo(root: Path) -> Path:
    repo = root / "project"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "User")
    git(repo, "config", "user.email", "user@example.invalid")
    (repo / "app.txt").write_text("v1\n")
    git(repo, "add", "app.txt")
    git(repo, "commit", "-q", "-m", "initial")
    (repo / "app.txt").write_text("stashed work\n")
    git(repo, "stash", "-q")
    (repo / "staged.txt").write_text("staged by the user\n")
    git(repo, "add", "staged.txt")
    (repo / "notes.md").write_text("the user's untracked notes\n")
    return repo


def _json(daemon: RealDaemon, *args: str) -> Any:
    return json.loads(daemon.cli(*args, "-o", "json").stdout)


def test_two_turns_diffed_undone_and_redone(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    repo = user_repo(tmp_path)
    state = user_state(repo)

    daemon.cli(
        "run", "--provider", "claude", "--mode", "bypassPermissions", "--cwd", str(repo),
        "--title", "main", "--wait-timeout", WAIT, "[[write:one.txt:written in turn one]]",
    )  # fmt: skip
    assert (repo / "one.txt").read_text() == "written in turn one"
    daemon.cli(
        "send", "--wait-timeout", WAIT, "main",
        "[[shell:printf 'v2 by turn two\\n' > app.txt && printf 'two\\n' > two.txt]]",
    )  # fmt: skip
    assert (repo / "app.txt").read_text() == "v2 by turn two\n"
    assert (repo / "two.txt").read_text() == "two\n"
    assert user_state(repo) == state

    listing = _json(daemon, "checkpoints", "main")
    assert listing["available"] is True
    assert Path(listing["repository"]) == repo
    assert [(t["turn"], t["filesChanged"], t["outcome"]) for t in listing["turns"]] == [
        (1, 1, "completed"),
        (2, 2, "completed"),
    ]
    table = daemon.cli("checkpoints", "main").stdout
    assert "TURN" in table
    assert "FILES" in table

    # Exactly turn 1's change; and without --turn, both turns.
    one = daemon.cli("diff", "main", "--turn", "1").stdout
    assert one.count("diff --git") == 1
    assert "+++ b/one.txt" in one
    assert "+written in turn one" in one
    assert "notes.md" not in one
    assert "staged.txt" not in one
    every = daemon.cli("diff", "main").stdout
    assert every.count("diff --git") == 3
    assert "# turn 2" in every

    # Undo turn 2, then turn 1: the files are as before each.
    undone = _json(daemon, "undo", "main", "--turn", "2")
    assert sorted(undone["restored"]) == ["app.txt", "two.txt"]
    assert undone["conflicts"] == []
    assert (repo / "app.txt").read_text() == "v1\n"
    assert not (repo / "two.txt").exists()
    assert (repo / "one.txt").exists()
    said = daemon.cli("undo", "main", "--turn", "1").stdout
    assert "undid turn 1: 1 file(s) restored" in said
    assert not (repo / "one.txt").exists()
    assert user_state(repo) == state

    # Redo takes the last undo (turn 1's) back.
    redone = _json(daemon, "undo", "main", "--redo")
    assert (redone["turn"], redone["restored"]) == (1, ["one.txt"])
    assert (repo / "one.txt").read_text() == "written in turn one"
    assert (repo / "app.txt").read_text() == "v1\n"
    assert [u["turn"] for u in _json(daemon, "checkpoints", "main")["undos"]] == [2]

    # While the agent works, undo is refused and changes nothing.
    daemon.cli("send", "--no-wait", "main", "[[slow:60]]")
    poll(
        lambda: _json(daemon, "inspect", "main")["agent"]["lastStatus"] == "running",
        timeout=TURN_TIMEOUT,
        what="the agent to be running",
    )
    refused = daemon.cli("undo", "main", "--turn", "1", check=False)
    assert refused.returncode != 0
    assert "running" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert (repo / "one.txt").exists()
    daemon.cli("wait", "main", "--timeout", WAIT)

    # The user's own files and git state survived everything.
    assert (repo / "notes.md").read_text() == "the user's untracked notes\n"
    assert (repo / "staged.txt").read_text() == "staged by the user\n"
    assert user_state(repo) == state
    assert git(repo, "stash", "show", "-p", "stash@{0}").count("+stashed work") == 1
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/paseo/").splitlines()


def test_an_agent_outside_a_git_tree_says_so(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    plain = tmp_path / "plain"
    plain.mkdir()
    daemon.cli(
        "run", "--provider", "claude", "--mode", "bypassPermissions", "--cwd", str(plain),
        "--title", "plain", "--wait-timeout", WAIT, "[[write:file.txt:x]]",
    )  # fmt: skip
    said = daemon.cli("checkpoints", "plain").stdout
    assert "not inside a git working tree" in said
    listing = _json(daemon, "checkpoints", "plain")
    assert listing["available"] is False
    assert listing["turns"] == []
    refused = daemon.cli("undo", "plain", check=False)
    assert refused.returncode != 0
    assert "not inside a git working tree" in refused.stderr
