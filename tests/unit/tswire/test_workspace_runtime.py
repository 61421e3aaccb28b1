"""A workspace descriptor's ``diffStat`` and ``githubRuntime``, filled as the TypeScript
daemon fills them (``describeWorkspaceRecordWithGitData``): the lines changed since the base
from ``workspace.gitRuntime``, and the branch's pull request through ``git.pr.status`` only
when ``origin`` is on GitHub — features off without ``gh`` (or signed out), never ``null``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.handlers import workspace_runtime as wr
from paseo_tswire.handlers.workspaces import descriptor
from paseo_tswire.models import workspace as wm

WORKSPACE = {
    "workspaceId": "w1", "projectId": "p1", "cwd": "/repo", "kind": "local_checkout",
    "displayName": "repo", "branch": "feature", "isPaseoOwnedWorktree": False,
    "archivedAt": None, "updatedAt": "2026-12-02T00:00:00Z",
}  # fmt: skip
PROJECT = {"projectId": "p1", "displayName": "repo", "rootPath": "/repo", "kind": "git"}
PR = {
    "number": 7, "url": "https://github.com/o/r/pull/7", "title": "Feature", "state": "OPEN",
    "baseRefName": "main", "headRefName": "feature", "isMerged": False, "isDraft": False,
    "reviewDecision": None, "checks": [], "checksStatus": "none", "repoOwner": "o",
    "repoName": "r",
}  # fmt: skip


class FakeSession:
    """What the runtime reads: ``workspace.gitRuntime`` and ``git.pr.status`` answers."""

    def __init__(self, remote: str | None, pr: Any) -> None:
        self.extra: dict[str, Any] = {}
        self.remote = remote
        self.pr = pr
        self.calls: list[str] = []

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(method)
        if method == "workspace.gitRuntime":
            return {
                "isDirty": True, "aheadBehind": {"ahead": 1, "behind": 0},
                "aheadOfOrigin": None, "behindOfOrigin": None,
                "diffStat": {"additions": 3, "deletions": 1}, "remoteUrl": self.remote,
            }  # fmt: skip
        assert method == "git.pr.status"
        assert params == {"cwd": "/repo"}
        if isinstance(self.pr, Exception):
            raise self.pr
        return {"cwd": "/repo", "pullRequest": self.pr}


def _wire(session: FakeSession) -> dict[str, Any]:
    async def build() -> dict[str, Any]:
        entry = descriptor(WORKSPACE, PROJECT, [], {})
        runtime = await wr.runtime_of(session, WORKSPACE, entry.gitRuntime)
        return entry.model_copy(
            update={
                "gitRuntime": runtime.git,
                "diffStat": runtime.diff_stat,
                "githubRuntime": runtime.github,
            }
        ).wire()

    return asyncio.run(build())


def test_a_github_checkout_carries_its_diff_stat_and_pull_request() -> None:
    session = FakeSession("git@github.com:o/r.git", PR)
    wire = _wire(session)
    assert wire["diffStat"] == {"additions": 3, "deletions": 1}
    assert wire["gitRuntime"]["remoteUrl"] == "git@github.com:o/r.git"
    assert wire["githubRuntime"] == {
        "featuresEnabled": True,
        "pullRequest": {
            "url": "https://github.com/o/r/pull/7", "title": "Feature", "state": "OPEN",
            "baseRefName": "main", "headRefName": "feature", "isMerged": False,
        },
        "error": None,
    }  # fmt: skip
    # The lookup is kept: a second descriptor within the TTL asks GitHub no more.
    _wire(session)
    assert session.calls.count("git.pr.status") == 1


def test_without_gh_github_features_are_off_not_null() -> None:
    unavailable = RpcFailure("github_unavailable", "GitHub features need the GitHub CLI `gh`")
    wire = _wire(FakeSession("https://github.com/o/r.git", unavailable))
    assert wire["githubRuntime"] == {"featuresEnabled": False, "pullRequest": None, "error": None}


def test_a_failed_lookup_is_the_error_with_features_on() -> None:
    failed = RpcFailure("git_failed", "gh pr view failed: HTTP 502")
    wire = _wire(FakeSession("https://github.com/o/r", failed))
    assert wire["githubRuntime"] == {
        "featuresEnabled": True,
        "pullRequest": None,
        "error": {"message": "gh pr view failed: HTTP 502"},
    }


def test_a_checkout_off_github_never_runs_gh_and_an_empty_diff_is_null() -> None:
    session = FakeSession("/srv/git/r.git", PR)
    wire = _wire(session)
    assert wire["githubRuntime"] == {"featuresEnabled": False, "pullRequest": None, "error": None}
    assert "git.pr.status" not in session.calls
    plain = descriptor({**WORKSPACE, "kind": "directory"}, None, [], {}).wire()
    assert plain["diffStat"] is None
    assert "diffStat" in plain
    assert plain["githubRuntime"] == {"featuresEnabled": False, "pullRequest": None, "error": None}


@pytest.mark.parametrize(
    ("url", "github"),
    [
        ("https://github.com/o/r.git", True),
        ("git@github.com:o/r.git", True),
        ("ssh://git@github.com/o/r", True),
        ("https://gitlab.com/o/r.git", False),
        ("https://github.com.evil.example/o/r", False),
        (None, False),
    ],
)
def test_github_remotes_are_recognised(url: str | None, github: bool) -> None:
    assert wr.is_github(url) is github


def test_descriptor_model_refuses_a_null_github_shape_field() -> None:
    with pytest.raises(ValueError):
        wm.GitHubRuntime(featuresEnabled=None, pullRequest=None, error=None)  # type: ignore[arg-type]
