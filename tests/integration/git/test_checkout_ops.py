"""Checkout operations on real temporary repositories: a working clone, a bare remote on disk
for push and pull, a second clone that pushes behind the first one's back, and conflicting
merges. Every git process goes through one limiter (asserted by its count)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest
from paseo_hookspecs.errors import AccessDenied

from paseo.git import branches, changes, checkout, stash
from paseo.git.github import GitHub
from paseo.git.limiter import GitProcessLimiter
from paseo.git.problems import (
    DirtyCheckout,
    GitHubUnavailable,
    MergeConflict,
    NotAGitCheckout,
    NothingToCommit,
    NoUpstream,
    RemoteRejected,
)
from paseo.git.runner import GitRunner

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, 60)

    return asyncio.run(bounded())


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def identity(repo: Path) -> None:
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    return bare


@pytest.fixture
def repo(tmp_path: Path, remote: Path) -> Path:
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    identity(work)
    (work / "a.txt").write_text("one\ntwo\nthree\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    git(work, "remote", "add", "origin", str(remote))
    git(work, "push", "-q", "-u", "origin", "main")
    return work


@pytest.fixture
def runner() -> GitRunner:
    return GitRunner(GitProcessLimiter())


def test_status_lists_each_change_with_its_state(repo: Path, runner: GitRunner) -> None:
    (repo / "a.txt").write_text("one\nTWO\nthree\n")
    (repo / "new.txt").write_text("fresh\n")
    (repo / "staged.txt").write_text("s\n")
    git(repo, "add", "staged.txt")
    found = run(checkout.read_status(runner, str(repo)))
    report = found.report
    assert report.branch == "main"
    assert report.upstream == "origin/main"
    assert (report.ahead, report.behind) == (0, 0)
    states = {f.path: (f.index, f.worktree, f.state) for f in report.files}
    assert states == {
        "a.txt": ("unchanged", "modified", "modified"),
        "new.txt": ("untracked", "untracked", "untracked"),
        "staged.txt": ("added", "unchanged", "added"),
    }
    assert found.facts.toplevel == str(repo)
    assert runner.processes_started >= 1


def test_status_of_a_directory_outside_any_checkout_says_so(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotAGitCheckout, match="not in a git checkout"):
        run(checkout.read_status(GitRunner(GitProcessLimiter()), str(plain)))


def test_diff_per_file_with_untracked_staged_binary_and_too_large(
    repo: Path, runner: GitRunner
) -> None:
    (repo / "a.txt").write_text("one\nTWO\nthree\n")
    (repo / "new.txt").write_text("fresh\nlines\n")
    (repo / "blob.bin").write_bytes(b"\0\1\2binary")
    (repo / "big.txt").write_text("".join(f"line {i}\n" for i in range(50)))
    git(repo, "add", "big.txt")
    found = run(checkout.read_diff(runner, str(repo), max_file_lines=20))
    by_path = {f.path: f for f in found.files}
    assert sorted(by_path) == ["a.txt", "big.txt", "blob.bin", "new.txt"]
    modified = by_path["a.txt"]
    assert (modified.additions, modified.deletions, modified.status) == (1, 1, "ok")
    lines = [(ln.type, ln.content) for ln in modified.hunks[0].lines]
    assert lines[0][0] == "header"
    assert ("remove", "two") in lines
    assert ("add", "TWO") in lines
    assert by_path["new.txt"].is_new
    assert by_path["new.txt"].additions == 2
    assert by_path["blob.bin"].status == "binary"
    big = by_path["big.txt"]
    assert (big.status, big.hunks, big.additions) == ("too_large", [], 50)
    staged = run(checkout.read_diff(runner, str(repo), scope="staged"))
    assert [f.path for f in staged.files] == ["big.txt"]
    unstaged = run(checkout.read_diff(runner, str(repo), scope="unstaged"))
    assert [f.path for f in unstaged.files] == ["a.txt"]


def test_diff_output_past_the_byte_bound_is_marked_not_dropped(
    repo: Path, runner: GitRunner
) -> None:
    (repo / "a.txt").write_text("".join(f"changed line {i}\n" for i in range(2000)))
    found = run(checkout.read_diff(runner, str(repo), max_bytes=4096))
    assert found.truncated
    assert [(f.path, f.status) for f in found.files] == [("a.txt", "too_large")]


def test_an_untracked_symlink_is_shown_as_its_target_never_followed(
    repo: Path, runner: GitRunner, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the checkout\n")
    os.symlink(secret, repo / "link")
    found = run(checkout.read_diff(runner, str(repo)))
    (link,) = found.files
    assert [ln.content for ln in link.hunks[0].lines[1:]] == [str(secret)]


def test_commit_lands_in_the_log(repo: Path, runner: GitRunner) -> None:
    (repo / "a.txt").write_text("changed\n")
    (repo / "b.txt").write_text("added\n")
    done = run(changes.commit(runner, str(repo), "Change things"))
    assert git(repo, "log", "-1", "--format=%H %s").strip() == f"{done.oid} Change things"
    assert git(repo, "status", "--porcelain") == ""
    with pytest.raises(NothingToCommit):
        run(changes.commit(runner, str(repo), "again"))


def test_push_without_upstream_names_the_command_then_sets_it(
    repo: Path, runner: GitRunner, remote: Path
) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "f.txt").write_text("f\n")
    run(changes.commit(runner, str(repo), "feature work"))
    with pytest.raises(NoUpstream) as refused:
        run(changes.push(runner, str(repo)))
    assert "git push --set-upstream origin feature" in refused.value.message
    assert run(changes.push(runner, str(repo), set_upstream=True)) == "origin/feature"
    assert git(remote, "rev-parse", "feature") == git(repo, "rev-parse", "HEAD")
    status = run(checkout.read_status(runner, str(repo)))
    assert status.report.upstream == "origin/feature"
    assert status.base is not None
    assert (status.base.ref, status.base.ahead) == ("main", 1)


def test_pull_brings_what_another_clone_pushed(
    repo: Path, runner: GitRunner, remote: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    identity(other)
    (other / "a.txt").write_text("from the other clone\n")
    git(other, "commit", "-q", "-am", "theirs")
    git(other, "push", "-q")
    git(repo, "fetch", "-q")
    assert run(checkout.read_status(runner, str(repo))).report.behind == 1
    run(changes.pull(runner, str(repo)))
    assert (repo / "a.txt").read_text() == "from the other clone\n"


def test_pull_without_upstream_says_how_to_set_it(repo: Path, runner: GitRunner) -> None:
    git(repo, "switch", "-q", "-c", "local-only")
    with pytest.raises(NoUpstream, match="--set-upstream-to=origin/local-only"):
        run(changes.pull(runner, str(repo)))


def _diverge(repo: Path) -> None:
    """main and feature both change line two of a.txt."""
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "a.txt").write_text("one\nfeature\nthree\n")
    git(repo, "commit", "-q", "-am", "feature side")
    git(repo, "switch", "-q", "main")
    (repo / "a.txt").write_text("one\nmain\nthree\n")
    git(repo, "commit", "-q", "-am", "main side")
    git(repo, "switch", "-q", "feature")


def test_a_conflicting_merge_from_base_names_files_and_how_to_abort(
    repo: Path, runner: GitRunner
) -> None:
    _diverge(repo)
    with pytest.raises(MergeConflict) as conflict:
        run(changes.merge_from_base(runner, str(repo), base_ref="main"))
    assert conflict.value.data["files"] == ["a.txt"]
    assert "a.txt" in conflict.value.message
    assert "git merge --abort" in conflict.value.message
    # Left in progress for the user to resolve, as the message says.
    assert (repo / ".git" / "MERGE_HEAD").exists()
    git(repo, "merge", "--abort")


def test_a_conflicting_merge_into_base_is_undone_and_reported(
    repo: Path, runner: GitRunner
) -> None:
    _diverge(repo)
    main_before = git(repo, "rev-parse", "main")
    with pytest.raises(MergeConflict, match="undone") as conflict:
        run(changes.merge_into_base(runner, str(repo), base_ref="main"))
    assert conflict.value.data["files"] == ["a.txt"]
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert git(repo, "branch", "--show-current").strip() == "feature"
    assert git(repo, "rev-parse", "main") == main_before


def test_merge_into_base_runs_in_the_worktree_that_has_the_base(
    repo: Path, runner: GitRunner, tmp_path: Path
) -> None:
    feature = tmp_path / "feature-wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(feature))
    (feature / "f.txt").write_text("f\n")
    run(changes.commit(runner, str(feature), "feature work"))
    where = run(changes.merge_into_base(runner, str(feature), base_ref="main"))
    assert where == str(repo)
    assert (repo / "f.txt").read_text() == "f\n"
    assert git(repo, "branch", "--show-current").strip() == "main"


def test_switch_to_local_and_to_remote_branches(
    repo: Path, runner: GitRunner, remote: Path, tmp_path: Path
) -> None:
    git(repo, "branch", "other")
    assert run(changes.switch(runner, str(repo), "other")).source == "local"
    assert git(repo, "branch", "--show-current").strip() == "other"
    pusher = tmp_path / "pusher"
    subprocess.run(["git", "clone", "-q", str(remote), str(pusher)], check=True)
    identity(pusher)
    git(pusher, "switch", "-q", "-c", "theirs")
    git(pusher, "push", "-q", "origin", "theirs")
    git(repo, "fetch", "-q")
    done = run(changes.switch(runner, str(repo), "theirs"))
    assert (done.branch, done.source) == ("theirs", "remote")
    assert git(repo, "rev-parse", "--abbrev-ref", "theirs@{upstream}").strip() == "origin/theirs"


def test_switch_refuses_to_overwrite_uncommitted_changes(repo: Path, runner: GitRunner) -> None:
    _diverge(repo)
    (repo / "a.txt").write_text("uncommitted\n")
    with pytest.raises(DirtyCheckout, match="stash"):
        run(changes.switch(runner, str(repo), "main"))


def test_stash_save_list_pop(repo: Path, runner: GitRunner) -> None:
    (repo / "a.txt").write_text("wip\n")
    (repo / "untracked.txt").write_text("u\n")
    run(stash.save(runner, str(repo), label="main"))
    assert git(repo, "status", "--porcelain") == ""
    entries = run(stash.list_stashes(runner, str(repo)))
    assert [(e.index, e.branch, e.is_paseo) for e in entries] == [(0, "main", True)]
    run(stash.pop(runner, str(repo), 0))
    assert (repo / "a.txt").read_text() == "wip\n"
    assert (repo / "untracked.txt").exists()
    assert run(stash.list_stashes(runner, str(repo), paseo_only=False)) == []


def test_branch_check_and_suggestions(repo: Path, runner: GitRunner) -> None:
    git(repo, "branch", "feature/login")
    assert run(branches.check(str(repo), "feature/login")).resolved_ref == "feature/login"
    bad = run(branches.check(str(repo), "has space"))
    assert bad.problem is not None
    assert not bad.exists
    missing = run(branches.check(str(repo), "nope"))
    assert (missing.problem, missing.exists) == (None, False)
    names = [b.name for b in run(branches.suggest(runner, str(repo), query="LOG"))]
    assert names == ["feature/login"]
    everything = {b.name: b for b in run(branches.suggest(runner, str(repo)))}
    assert everything["main"].has_local
    assert everything["main"].has_remote


def test_github_features_without_gh_name_what_is_missing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    github = GitHub(GitProcessLimiter())
    with pytest.raises(GitHubUnavailable) as missing:
        run(github.pr_status(str(repo)))
    assert missing.value.data == {"missing": "gh"}
    assert "`gh`" in missing.value.message
    assert "gh auth login" in missing.value.message
    assert run(github.available(str(repo))) is False


def test_diff_against_the_base_shows_the_branch_s_work(repo: Path, runner: GitRunner) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "f.txt").write_text("committed on the branch\n")
    run(changes.commit(runner, str(repo), "branch work"))
    (repo / "g.txt").write_text("not yet committed\n")
    against_base = run(checkout.read_diff(runner, str(repo), scope="base", base_ref="main"))
    assert [f.path for f in against_base.files] == ["f.txt", "g.txt"]
    uncommitted = run(checkout.read_diff(runner, str(repo)))
    assert [f.path for f in uncommitted.files] == ["g.txt"]


def test_a_push_the_remote_rejects_says_to_pull_first(
    repo: Path, runner: GitRunner, remote: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    identity(other)
    (other / "a.txt").write_text("theirs\n")
    git(other, "commit", "-q", "-am", "theirs")
    git(other, "push", "-q")
    (repo / "b.txt").write_text("ours\n")
    run(changes.commit(runner, str(repo), "ours"))
    with pytest.raises(RemoteRejected, match="paseo git pull"):
        run(changes.push(runner, str(repo)))


def test_a_squash_merge_into_base_is_one_commit_on_the_base(repo: Path, runner: GitRunner) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    for name in ("x", "y"):
        (repo / f"{name}.txt").write_text(f"{name}\n")
        run(changes.commit(runner, str(repo), f"add {name}"))
    run(changes.merge_into_base(runner, str(repo), base_ref="main", squash=True))
    assert git(repo, "branch", "--show-current").strip() == "feature"
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "Squash merge feature into main"
    assert git(repo, "show", "--name-only", "--format=", "main").split() == ["x.txt", "y.txt"]


def test_merging_from_the_base_refuses_uncommitted_changes(repo: Path, runner: GitRunner) -> None:
    _diverge(repo)
    (repo / "a.txt").write_text("dirty\n")
    with pytest.raises(DirtyCheckout, match="commit or stash"):
        run(changes.merge_from_base(runner, str(repo), base_ref="main"))


def test_a_merge_into_a_base_checkout_the_caller_may_not_reach_changes_nothing(
    repo: Path, runner: GitRunner, tmp_path: Path
) -> None:
    feature = tmp_path / "feature-wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(feature))
    (feature / "f.txt").write_text("f\n")
    run(changes.commit(runner, str(feature), "feature work"))
    main_before = git(repo, "rev-parse", "main")
    seen: list[str] = []

    async def refuse(target: str) -> None:
        seen.append(target)
        raise AccessDenied(f"may not open {target}")

    with pytest.raises(AccessDenied):
        run(changes.merge_into_base(runner, str(feature), base_ref="main", allow=refuse))
    assert seen == [str(repo)]
    assert git(repo, "rev-parse", "main") == main_before


def test_untracked_files_past_the_byte_bound_are_listed_unread(
    repo: Path, runner: GitRunner
) -> None:
    for name in ("u1.txt", "u2.txt", "u3.txt"):
        (repo / name).write_text("x" * 3000 + "\n")
    found = run(checkout.read_diff(runner, str(repo), max_bytes=7000))
    assert [(f.path, f.status) for f in found.files] == [
        ("u1.txt", "ok"),
        ("u2.txt", "ok"),
        ("u3.txt", "too_large"),
    ]
