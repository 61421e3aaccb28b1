"""The app's git and checkout panel over the TypeScript wire, against real repositories: the
status shows a modified file, the diff subscription pushes an update after a file changes, a
commit lands in ``git log``, a branch switch, stashes, branches, push and pull with a bare
remote on disk, a conflict named with its files, and GitHub features answering what is missing
(``gh`` is not on the daemon's PATH here). Every frame is validated by the client."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon

pytestmark = pytest.mark.e2e


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    git(work, "config", "user.name", "Test")
    git(work, "config", "user.email", "test@example.invalid")
    (work / "a.txt").write_text("one\ntwo\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    git(work, "remote", "add", "origin", str(remote))
    git(work, "push", "-q", "-u", "origin", "main")
    return work


@pytest.fixture
def app(ts_daemon: TsDaemon, request: pytest.FixtureRequest) -> Iterator[TsClient]:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello(f"cid_checkout_{request.node.name[-40:]}", client_type="mobile")
        yield client


def _diff_update(client: TsClient, subscription: str, path: str) -> dict[str, Any]:
    message = client.wait_for(
        lambda m: (
            m["type"] == "checkout_diff_update"
            and m["payload"]["subscriptionId"] == subscription
            and any(f["path"] == path for f in m["payload"]["files"])
        )
    )
    payload: dict[str, Any] = message["payload"]
    return payload


def test_status_diff_subscription_commit_and_switch(app: TsClient, repo: Path) -> None:
    cwd = str(repo)
    (repo / "a.txt").write_text("one\nTWO\n")
    status = app.request("checkout_status_request", "checkout_status_response", cwd=cwd)
    assert (status["isGit"], status["isDirty"], status["currentBranch"]) == (True, True, "main")
    assert (status["repoRoot"], status["hasRemote"], status["aheadOfOrigin"]) == (cwd, True, 0)
    assert status["error"] is None

    subscribed = app.request(
        "subscribe_checkout_diff_request",
        "subscribe_checkout_diff_response",
        cwd=cwd,
        subscriptionId="diff-1",
        compare={"mode": "uncommitted"},
    )
    (changed,) = subscribed["files"]
    assert (changed["path"], changed["additions"], changed["deletions"]) == ("a.txt", 1, 1)
    lines = [(ln["type"], ln["content"]) for ln in changed["hunks"][0]["lines"]]
    assert ("remove", "two") in lines
    assert ("add", "TWO") in lines

    # A file written behind the daemon's back reaches the subscription.
    (repo / "b.txt").write_text("new file\n")
    update = _diff_update(app, "diff-1", "b.txt")
    assert sorted(f["path"] for f in update["files"]) == ["a.txt", "b.txt"]

    committed = app.request(
        "checkout_commit_request", "checkout_commit_response", cwd=cwd, message="From the app"
    )
    assert (committed["success"], committed["error"]) == (True, None)
    assert git(repo, "log", "-1", "--format=%s") == "From the app"
    assert git(repo, "status", "--porcelain") == ""
    cleared = app.wait_for(
        lambda m: m["type"] == "checkout_diff_update" and m["payload"]["files"] == []
    )
    assert cleared["payload"]["subscriptionId"] == "diff-1"
    # The status the app asked for follows: it caches it and counts on these pushes.
    clean = app.wait_for(
        lambda m: m["type"] == "checkout_status_update" and m["payload"]["isDirty"] is False
    )
    assert (clean["payload"]["cwd"], clean["payload"]["requestId"]) == (cwd, f"subscription:{cwd}")
    (repo / "c.txt").write_text("one click\n")
    app.wait_for(
        lambda m: m["type"] == "checkout_status_update" and m["payload"]["isDirty"] is True
    )

    # The app's commit button sends no message: one is generated, or (no agent answers here)
    # the TypeScript daemon's fallback is used.
    clicked = app.request(
        "checkout_commit_request", "checkout_commit_response", timeout=120, cwd=cwd, addAll=True
    )
    assert clicked["success"] is True
    assert git(repo, "log", "-1", "--format=%s") == "Update files"

    git(repo, "branch", "side")
    switched = app.request(
        "checkout_switch_branch_request", "checkout_switch_branch_response", cwd=cwd, branch="side"
    )
    assert (switched["success"], switched["source"]) == (True, "local")
    assert git(repo, "branch", "--show-current") == "side"
    missing = app.request(
        "checkout_switch_branch_request", "checkout_switch_branch_response", cwd=cwd, branch="nope"
    )
    assert missing["success"] is False
    assert "nope" in missing["error"]["message"]

    app.session({"type": "unsubscribe_checkout_diff_request", "subscriptionId": "diff-1"})
    status = app.request("checkout_status_request", "checkout_status_response", cwd=cwd)
    assert status["currentBranch"] == "side"


def test_a_directory_outside_git_is_not_git(app: TsClient, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    status = app.request("checkout_status_request", "checkout_status_response", cwd=str(plain))
    assert (status["isGit"], status["repoRoot"], status["error"]) == (False, None, None)
    diff = app.request(
        "subscribe_checkout_diff_request",
        "subscribe_checkout_diff_response",
        cwd=str(plain),
        subscriptionId="diff-plain",
        compare={"mode": "uncommitted"},
    )
    assert (diff["files"], diff["error"]["code"]) == ([], "NOT_GIT_REPO")


def test_push_pull_stash_branches_and_a_conflict(app: TsClient, repo: Path, tmp_path: Path) -> None:
    cwd = str(repo)
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "f.txt").write_text("feature\n")
    app.request("checkout_commit_request", "checkout_commit_response", cwd=cwd, message="f")
    pushed = app.request("checkout_push_request", "checkout_push_response", cwd=cwd)
    assert (pushed["success"], pushed["error"]) == (True, None)
    assert git(repo, "rev-parse", "--abbrev-ref", "feature@{upstream}") == "origin/feature"

    other = tmp_path / "other"
    subprocess.run(
        ["git", "clone", "-q", "-b", "feature", str(tmp_path / "remote.git"), str(other)],
        check=True,
    )
    git(other, "config", "user.name", "Other")
    git(other, "config", "user.email", "other@example.invalid")
    (other / "g.txt").write_text("from the other clone\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q")
    pulled = app.request("checkout_pull_request", "checkout_pull_response", cwd=cwd)
    assert pulled["success"] is True
    assert (repo / "g.txt").read_text() == "from the other clone\n"

    (repo / "wip.txt").write_text("wip\n")
    saved = app.request("stash_save_request", "stash_save_response", cwd=cwd, branch="feature")
    assert saved["success"] is True
    listed = app.request("stash_list_request", "stash_list_response", cwd=cwd)
    assert [(e["index"], e["branch"], e["isPaseo"]) for e in listed["entries"]] == [
        (0, "feature", True)
    ]
    popped = app.request("stash_pop_request", "stash_pop_response", cwd=cwd, stashIndex=0)
    assert popped["success"] is True
    assert (repo / "wip.txt").exists()
    (repo / "wip.txt").unlink()

    valid = app.request(
        "validate_branch_request", "validate_branch_response", cwd=cwd, branchName="main"
    )
    assert (valid["exists"], valid["resolvedRef"], valid["error"]) == (True, "main", None)
    invalid = app.request(
        "validate_branch_request", "validate_branch_response", cwd=cwd, branchName="a..b"
    )
    assert invalid["exists"] is False
    assert "invalid branch name" in invalid["error"]
    suggested = app.request(
        "branch_suggestions_request", "branch_suggestions_response", cwd=cwd, query="feat"
    )
    assert suggested["branches"] == ["feature"]

    (repo / "a.txt").write_text("one\nfeature side\n")
    git(repo, "commit", "-q", "-am", "feature side")
    git(repo, "switch", "-q", "main")
    (repo / "a.txt").write_text("one\nmain side\n")
    git(repo, "commit", "-q", "-am", "main side")
    git(repo, "switch", "-q", "feature")
    merged = app.request(
        "checkout_merge_from_base_request",
        "checkout_merge_from_base_response",
        cwd=cwd,
        baseRef="main",
    )
    assert merged["success"] is False
    assert merged["error"]["code"] == "MERGE_CONFLICT"
    assert "a.txt" in merged["error"]["message"]
    assert "git merge --abort" in merged["error"]["message"]
    git(repo, "merge", "--abort")


def test_github_features_say_gh_is_missing(app: TsClient, repo: Path) -> None:
    cwd = str(repo)
    status = app.request("checkout_pr_status_request", "checkout_pr_status_response", cwd=cwd)
    assert (status["status"], status["githubFeaturesEnabled"]) == (None, False)
    assert "`gh`" in status["error"]["message"]
    search = app.request("github_search_request", "github_search_response", cwd=cwd, query="bug")
    assert (search["items"], search["githubFeaturesEnabled"]) == ([], False)
    assert "gh auth login" in search["error"]
    timeline = app.request(
        "pull_request_timeline_request",
        "pull_request_timeline_response",
        cwd=cwd,
        prNumber=1,
        repoOwner="o",
        repoName="r",
    )
    assert timeline["githubFeaturesEnabled"] is False
    assert "`gh`" in timeline["error"]["message"]
    created = app.request(
        "checkout_pr_create_request", "checkout_pr_create_response", cwd=cwd, title="T"
    )
    assert (created["url"], created["error"]["code"]) == (None, "UNKNOWN")
    assert "`gh`" in created["error"]["message"]


@contextmanager
def _remote(ts_daemon: TsDaemon, name: str) -> Iterator[TsClient]:
    """A remote (app token) session over TCP, as the app on another host connects."""
    created = json.loads(
        ts_daemon.cli("daemon", "token", "create", "--name", name, "-o", "json").stdout
    )
    with TsClient(
        uri=ts_daemon.tcp_uri, subprotocols=[f"paseo.bearer.{created['token']}"]
    ) as remote:
        remote.hello(f"cid_checkout_remote_{name}", client_type="mobile")
        yield remote


def test_a_remote_session_reaches_only_directories_it_may_open(
    ts_daemon: TsDaemon, repo: Path
) -> None:
    with _remote(ts_daemon, "checkout") as remote:
        # The repository is outside the daemon user's home and in no project yet.
        refused = remote.request(
            "checkout_status_request", "checkout_status_response", cwd=str(repo)
        )
        assert (refused["isGit"], refused["error"]["code"]) == (False, "NOT_ALLOWED")
        commit = remote.request(
            "checkout_commit_request", "checkout_commit_response", cwd=str(repo), message="x"
        )
        assert commit["error"]["code"] == "NOT_ALLOWED"
        ts_daemon.cli("project", "add", str(repo))
        allowed = remote.request(
            "checkout_status_request", "checkout_status_response", cwd=str(repo)
        )
        assert (allowed["isGit"], allowed["error"]) == (True, None)


def test_a_remote_session_reaches_a_worktree_the_daemon_made(
    ts_daemon: TsDaemon, app: TsClient, repo: Path
) -> None:
    """The app makes a worktree (under ``PASEO_HOME/worktrees``, outside the user's home here)
    and at once asks for its checkout and PR status: a remote client may, as it may the project."""
    ts_daemon.cli("project", "add", str(repo))
    made = app.request(
        "create_paseo_worktree_request",
        "create_paseo_worktree_response",
        timeout=120,
        cwd=str(repo),
        worktreeSlug="remote-view",
    )
    assert made["error"] is None, made
    worktree = made["workspace"]["workspaceDirectory"]
    assert worktree.startswith(str(ts_daemon.home))
    with _remote(ts_daemon, "worktree") as remote:
        status = remote.request("checkout_status_request", "checkout_status_response", cwd=worktree)
        assert (status["isGit"], status["error"]) == (True, None), status
        pr = remote.request(
            "checkout_pr_status_request", "checkout_pr_status_response", cwd=worktree
        )
        assert pr["error"] is None or pr["error"].get("code") != "NOT_ALLOWED", pr
        # The rest of the daemon's state stays closed to it.
        refused = remote.request(
            "checkout_status_request", "checkout_status_response", cwd=str(ts_daemon.home)
        )
        assert refused["error"]["code"] == "NOT_ALLOWED"
