"""The params and results of the ``git.*`` methods (documented in docs/protocol.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from paseo.rpc.models import WireModel


class CwdParams(WireModel):
    cwd: str = Field(min_length=1, description="a directory inside the checkout (absolute)")


class FileView(WireModel):
    path: str = Field(description="relative to the checkout root")
    origPath: str | None = Field(default=None, description="renamed or copied from")
    index: str = Field(
        description="staged state: modified, added, deleted, renamed, copied, "
        "type_changed, conflicted, untracked or unchanged"
    )
    worktree: str = Field(description="unstaged state (the same words)")
    state: str = Field(description="one word for the path")


class BaseView(WireModel):
    ref: str
    ahead: int = Field(description="commits on HEAD not on the base")
    behind: int = Field(description="commits on the base not on HEAD")


class StatusResult(WireModel):
    cwd: str
    repoRoot: str
    mainRepoRoot: str
    isLinkedWorktree: bool
    isPaseoOwnedWorktree: bool
    branch: str | None = Field(description="null when HEAD is detached")
    headOid: str | None = Field(description="null before the first commit")
    upstream: str | None
    ahead: int | None = Field(description="commits not on the upstream (null: no upstream)")
    behind: int | None
    baseRef: str | None = Field(description="the worktree's recorded base, else the default branch")
    base: BaseView | None = Field(description="HEAD against baseRef (null on the base itself)")
    remoteUrl: str | None
    dirty: bool
    files: list[FileView]
    truncated: bool = Field(description="more changed files exist than were listed")


class DiffParams(CwdParams):
    scope: Literal["unstaged", "staged", "uncommitted", "base"] = Field(
        default="uncommitted",
        description="unstaged: working tree vs index; staged: index vs HEAD; uncommitted: "
        "working tree vs HEAD (untracked included); base: vs the merge base with baseRef",
    )
    baseRef: str | None = None
    ignoreWhitespace: bool = False


class DiffLineView(WireModel):
    type: Literal["add", "remove", "context", "header"]
    content: str


class DiffHunkView(WireModel):
    oldStart: int
    oldCount: int
    newStart: int
    newCount: int
    lines: list[DiffLineView]


class DiffFileView(WireModel):
    path: str
    oldPath: str | None = None
    isNew: bool
    isDeleted: bool
    additions: int
    deletions: int
    status: Literal["ok", "too_large", "binary"] = Field(
        description="too_large: the hunks were left out (the file or the diff is past the "
        "size bounds); binary: no text diff"
    )
    hunks: list[DiffHunkView]


class DiffResult(WireModel):
    cwd: str
    scope: str
    files: list[DiffFileView]
    truncated: bool = Field(description="files or output past the bounds were left out")


class CommitParams(CwdParams):
    message: str = Field(min_length=1)
    all: bool = Field(default=True, description="stage every change first (untracked too)")


class CommitResult(WireModel):
    cwd: str
    commit: str
    summary: str


class MergeParams(CwdParams):
    baseRef: str | None = Field(default=None, description="default: the default branch")
    strategy: Literal["merge", "squash"] = "merge"


class MergeResult(WireModel):
    cwd: str
    mergedIn: str = Field(description="the checkout where the base branch was updated")


class MergeFromBaseParams(CwdParams):
    baseRef: str | None = None
    requireClean: bool = Field(default=True, description="refuse with uncommitted changes")


class MergeFromBaseResult(WireModel):
    cwd: str
    baseRef: str


class PushParams(CwdParams):
    setUpstream: bool = Field(
        default=False, description="a branch without upstream is pushed to origin and tracks it"
    )


class PushResult(WireModel):
    cwd: str
    upstream: str


class OkResult(WireModel):
    cwd: str


class SwitchParams(CwdParams):
    branch: str = Field(min_length=1)


class SwitchResult(WireModel):
    cwd: str
    branch: str
    source: Literal["local", "remote"]


class StashSaveParams(CwdParams):
    label: str | None = Field(default=None, description="a branch name to tag the stash with")


class StashPopParams(CwdParams):
    index: int = Field(ge=0)


class StashListParams(CwdParams):
    paseoOnly: bool = Field(default=False, description="only stashes Paseo saved")


class StashView(WireModel):
    index: int
    message: str
    branch: str | None
    isPaseo: bool


class StashListResult(WireModel):
    cwd: str
    entries: list[StashView]


class BranchCheckParams(CwdParams):
    name: str


class BranchCheckResult(WireModel):
    name: str
    valid: bool
    problem: str | None = Field(description="why git refuses the name")
    exists: bool
    resolvedRef: str | None
    isRemote: bool


class BranchSuggestParams(CwdParams):
    query: str = ""
    limit: int = Field(default=50, ge=1, le=200)


class BranchView(WireModel):
    name: str
    committerDate: int = Field(description="seconds since the epoch")
    hasLocal: bool
    hasRemote: bool


class BranchSuggestResult(WireModel):
    branches: list[BranchView]


class PrCreateParams(CwdParams):
    title: str | None = Field(default=None, description="default: the last commit's subject")
    body: str = ""
    baseRef: str | None = None


class PrCreateResult(WireModel):
    url: str
    number: int | None


class PrView(WireModel):
    number: int
    url: str
    title: str
    state: str
    baseRefName: str
    headRefName: str
    isMerged: bool
    isDraft: bool
    reviewDecision: str | None
    checks: list[dict[str, Any]]
    checksStatus: str
    repoOwner: str | None
    repoName: str | None


class PrStatusResult(WireModel):
    cwd: str
    pullRequest: PrView | None


class PrTimelineParams(CwdParams):
    number: int = Field(gt=0)
    owner: str = Field(min_length=1)
    repo: str = Field(min_length=1)


class ItemsResult(WireModel):
    items: list[dict[str, Any]]


SearchKind = Literal["github-issue", "github-pr"]
_BOTH_KINDS: tuple[SearchKind, ...] = ("github-issue", "github-pr")


class SearchParams(CwdParams):
    query: str
    limit: int = Field(default=20, ge=1, le=50)
    kinds: list[SearchKind] = Field(default_factory=lambda: list(_BOTH_KINDS))
