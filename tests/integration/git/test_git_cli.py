"""``paseo git …`` against a real daemon: the CLI calls ``git.*``, the daemon runs git in the
named checkout. A bare remote on disk takes the pushes; a conflicting merge from the base is
reported with its files and the way back, as an error line (no traceback)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon
from integration.scripts.conftest import git


@pytest.fixture
def daemon(paseo_home: Path, git_env: None) -> Iterator[LiveDaemon]:
    live = start_daemon(paseo_home)
    try:
        yield live
    finally:
        stop_daemon(paseo_home)
        kill_leftover(live.pid)


@pytest.fixture
def checkout(tmp_path: Path, git_env: None) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "a.txt").write_text("one\ntwo\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    git(work, "remote", "add", "origin", str(remote))
    return work


def as_json(run_paseo: Any, *args: str) -> Any:
    return json.loads(run_paseo("git", *args, "-o", "json", check=True).stdout)


def test_status_diff_commit_push_switch_through_the_daemon(
    daemon: LiveDaemon, checkout: Path, run_paseo: Any
) -> None:
    cwd = str(checkout)
    (checkout / "a.txt").write_text("one\nTWO\n")
    status = as_json(run_paseo, "status", "--cwd", cwd)
    assert status["branch"] == "main"
    assert status["upstream"] is None
    assert [(f["path"], f["state"]) for f in status["files"]] == [("a.txt", "modified")]
    human = run_paseo("git", "status", "--cwd", cwd, check=True).stdout
    assert "On branch main" in human
    assert "paseo git push --set-upstream" in human
    assert "modified" in human
    assert "a.txt" in human

    diff = run_paseo("git", "diff", "--cwd", cwd, check=True).stdout
    assert "-two\n+TWO\n" in diff

    commit = as_json(run_paseo, "commit", "-m", "Shout two", "--cwd", cwd)
    assert git(checkout, "log", "-1", "--format=%H %s") == f"{commit['commit']} Shout two"

    refused = run_paseo("git", "push", "--cwd", cwd)
    assert refused.returncode != 0
    assert "git push --set-upstream origin main" in refused.stderr
    assert "Traceback" not in refused.stderr
    pushed = as_json(run_paseo, "push", "--set-upstream", "--cwd", cwd)
    assert pushed["upstream"] == "origin/main"
    assert as_json(run_paseo, "status", "--cwd", cwd)["ahead"] == 0

    git(checkout, "branch", "side")
    switched = run_paseo("git", "switch", "side", "--cwd", cwd, check=True).stdout
    assert "switched to side" in switched
    assert git(checkout, "branch", "--show-current") == "side"


def test_stash_round_trip_and_a_conflict_from_the_base(
    daemon: LiveDaemon, checkout: Path, run_paseo: Any
) -> None:
    cwd = str(checkout)
    (checkout / "wip.txt").write_text("wip\n")
    run_paseo("git", "stash", "save", "--cwd", cwd, check=True)
    listed = as_json(run_paseo, "stash", "list", "--cwd", cwd)
    assert [e["isPaseo"] for e in listed["entries"]] == [True]
    run_paseo("git", "stash", "pop", "--cwd", cwd, check=True)
    assert (checkout / "wip.txt").read_text() == "wip\n"
    (checkout / "wip.txt").unlink()

    git(checkout, "switch", "-q", "-c", "feature")
    (checkout / "a.txt").write_text("one\nfeature\n")
    git(checkout, "commit", "-q", "-am", "feature side")
    git(checkout, "switch", "-q", "main")
    (checkout / "a.txt").write_text("one\nmain\n")
    git(checkout, "commit", "-q", "-am", "main side")
    git(checkout, "switch", "-q", "feature")
    failed = run_paseo("git", "merge", "--from-base", "--base", "main", "--cwd", cwd)
    assert failed.returncode != 0
    assert "a.txt" in failed.stderr
    assert "git merge --abort" in failed.stderr
    assert "Traceback" not in failed.stderr


def test_a_directory_outside_any_checkout_and_the_state_root_are_refused(
    daemon: LiveDaemon, tmp_path: Path, paseo_home: Path, run_paseo: Any
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    outside = run_paseo("git", "status", "--cwd", str(plain))
    assert outside.returncode != 0
    assert "not in a git checkout" in outside.stderr
    inside = run_paseo("git", "status", "--cwd", str(paseo_home))
    assert inside.returncode != 0
    assert "state root" in inside.stderr
