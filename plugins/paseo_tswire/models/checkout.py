"""The git and checkout panel's messages (``msgs``: ``CheckoutStatusResponseSchema``,
``CheckoutDiffUpdateSchema``, ``StashListResponseSchema``, ``GitHubSearchResponseSchema``, …).

A ``checkout_status_response`` payload is one of three shapes told apart by ``isGit`` and
``isPaseoOwnedWorktree`` (not a checkout; a checkout; a Paseo-owned worktree), so
:data:`CHECKOUT_UNIONS` validates those frames by their discriminators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from paseo_tswire.models.wire import Inbound, Wire

ErrorCode = Literal["NOT_GIT_REPO", "NOT_ALLOWED", "MERGE_CONFLICT", "UNKNOWN"]


# ---------------------------------------------------------------------------- inbound


class CwdRequest(Inbound):
    cwd: str
    requestId: str


class DiffCompare(Inbound):
    mode: Literal["uncommitted", "base"]
    baseRef: str | None = None
    ignoreWhitespace: bool | None = None


class SubscribeDiff(CwdRequest):
    subscriptionId: str
    compare: DiffCompare


class UnsubscribeDiff(Inbound):
    subscriptionId: str


class CommitRequest(CwdRequest):
    message: str | None = None
    addAll: bool | None = None


class MergeRequest(CwdRequest):
    baseRef: str | None = None
    strategy: Literal["merge", "squash"] | None = None
    requireCleanTarget: bool | None = None


class MergeFromBaseRequest(CwdRequest):
    baseRef: str | None = None
    requireCleanTarget: bool | None = None


class PrCreateRequest(CwdRequest):
    title: str | None = None
    body: str | None = None
    baseRef: str | None = None


class PrTimelineRequest(CwdRequest):
    prNumber: float
    repoOwner: str
    repoName: str


class ValidateBranchRequest(CwdRequest):
    branchName: str


class SwitchBranchRequest(CwdRequest):
    branch: str


class StashSaveRequest(CwdRequest):
    branch: str | None = None


class StashPopRequest(CwdRequest):
    stashIndex: int = Field(ge=0)


class StashListRequest(CwdRequest):
    paseoOnly: bool | None = None


class BranchSuggestionsRequest(CwdRequest):
    query: str | None = None
    limit: int | None = Field(default=None, ge=1, le=200)


class GitHubSearchRequest(CwdRequest):
    query: str
    limit: int | None = Field(default=None, ge=1, le=50)
    kinds: list[Literal["github-issue", "github-pr"]] | None = None


# --------------------------------------------------------------------------- outbound


class CheckoutError(Wire):
    code: ErrorCode
    message: str


class AheadBehind(Wire):
    ahead: int
    behind: int


class StatusNotGit(Wire):
    cwd: str
    error: CheckoutError | None
    requestId: str
    isGit: Literal[False]
    isPaseoOwnedWorktree: Literal[False]
    repoRoot: None
    currentBranch: None
    isDirty: None
    baseRef: None
    aheadBehind: None
    aheadOfOrigin: None
    behindOfOrigin: None
    hasRemote: bool
    remoteUrl: None


class StatusGit(Wire):
    cwd: str
    error: CheckoutError | None
    requestId: str
    isGit: Literal[True]
    isPaseoOwnedWorktree: Literal[False]
    repoRoot: str
    mainRepoRoot: str | None = None
    currentBranch: str | None
    isDirty: bool
    baseRef: str | None
    aheadBehind: AheadBehind | None
    aheadOfOrigin: int | None
    behindOfOrigin: int | None
    hasRemote: bool
    remoteUrl: str | None


class StatusPaseo(Wire):
    cwd: str
    error: CheckoutError | None
    requestId: str
    isGit: Literal[True]
    isPaseoOwnedWorktree: Literal[True]
    repoRoot: str
    mainRepoRoot: str
    currentBranch: str | None
    isDirty: bool
    baseRef: str
    aheadBehind: AheadBehind | None
    aheadOfOrigin: int | None
    behindOfOrigin: int | None
    hasRemote: bool
    remoteUrl: str | None


def _status(payload: dict[str, Any]) -> Wire:
    if payload.get("isGit") is not True:
        return StatusNotGit.model_validate(payload)
    if payload.get("isPaseoOwnedWorktree") is True:
        return StatusPaseo.model_validate(payload)
    return StatusGit.model_validate(payload)


def _status_update(payload: dict[str, Any]) -> Wire:
    """``checkout_status_update``: a status payload (``prStatus`` is optional and not sent)."""
    return _status(payload)


class DiffLine(Wire):
    type: Literal["add", "remove", "context", "header"]
    content: str


class DiffHunk(Wire):
    oldStart: int
    oldCount: int
    newStart: int
    newCount: int
    lines: list[DiffLine]


class DiffFile(Wire):
    path: str
    isNew: bool
    isDeleted: bool
    additions: int
    deletions: int
    hunks: list[DiffHunk]
    status: Literal["ok", "too_large", "binary"] | None = None


class DiffUpdate(Wire):
    subscriptionId: str
    cwd: str
    files: list[DiffFile]
    error: CheckoutError | None


class DiffSubscribed(DiffUpdate):
    requestId: str


class CheckoutOk(Wire):
    """``checkout_commit/merge/merge_from_base/pull/push_response``, ``stash_save/pop``."""

    cwd: str
    success: bool
    error: CheckoutError | None
    requestId: str


class PrCreated(Wire):
    cwd: str
    url: str | None
    number: int | None
    error: CheckoutError | None
    requestId: str


class PrCheck(Wire):
    name: str
    status: str
    url: str | None
    workflow: str | None = None
    duration: str | None = None


class PrStatus(Wire):
    number: int | None = None
    url: str
    title: str
    state: str
    baseRefName: str
    headRefName: str
    isMerged: bool
    isDraft: bool | None = None
    checks: list[PrCheck] | None = None
    checksStatus: str | None = None
    reviewDecision: str | None = None
    repoOwner: str | None = None
    repoName: str | None = None


class PrStatusReply(Wire):
    cwd: str
    status: PrStatus | None
    githubFeaturesEnabled: bool
    error: CheckoutError | None
    requestId: str


class TimelineError(Wire):
    kind: Literal["not_found", "forbidden", "unknown"]
    message: str


class TimelineReview(Wire):
    id: str
    kind: Literal["review"] = "review"
    author: str
    body: str
    createdAt: int
    url: str
    reviewState: Literal["approved", "changes_requested", "commented"]


class TimelineComment(Wire):
    id: str
    kind: Literal["comment"] = "comment"
    author: str
    body: str
    createdAt: int
    url: str


class TimelineReply(Wire):
    cwd: str
    prNumber: int | None
    items: list[TimelineReview | TimelineComment]
    truncated: bool
    error: TimelineError | None
    requestId: str
    githubFeaturesEnabled: bool


class SwitchReply(Wire):
    cwd: str
    success: bool
    branch: str
    source: Literal["local", "remote"] | None = None
    error: CheckoutError | None
    requestId: str


class StashEntry(Wire):
    index: int = Field(ge=0)
    message: str
    branch: str | None
    isPaseo: bool


class StashListReply(Wire):
    cwd: str
    entries: list[StashEntry]
    error: CheckoutError | None
    requestId: str


class ValidateBranchReply(Wire):
    exists: bool
    resolvedRef: str | None
    isRemote: bool
    error: str | None
    requestId: str


class BranchDetail(Wire):
    name: str
    committerDate: int
    hasLocal: bool | None = None
    hasRemote: bool | None = None


class BranchSuggestionsReply(Wire):
    branches: list[str]
    branchDetails: list[BranchDetail] | None = None
    error: str | None
    requestId: str


class GitHubItem(Wire):
    kind: Literal["issue", "pr"]
    number: int
    title: str
    url: str
    state: str
    body: str | None
    labels: list[str]
    baseRefName: str | None = None
    headRefName: str | None = None
    updatedAt: str | None = None


class GitHubSearchReply(Wire):
    items: list[GitHubItem]
    githubFeaturesEnabled: bool
    error: str | None
    requestId: str


CHECKOUT_OUTBOUND: dict[str, type[Wire]] = {
    "subscribe_checkout_diff_response": DiffSubscribed,
    "checkout_diff_update": DiffUpdate,
    "checkout_commit_response": CheckoutOk,
    "checkout_merge_response": CheckoutOk,
    "checkout_merge_from_base_response": CheckoutOk,
    "checkout_pull_response": CheckoutOk,
    "checkout_push_response": CheckoutOk,
    "checkout_pr_create_response": PrCreated,
    "checkout_pr_status_response": PrStatusReply,
    "pull_request_timeline_response": TimelineReply,
    "checkout_switch_branch_response": SwitchReply,
    "stash_save_response": CheckoutOk,
    "stash_pop_response": CheckoutOk,
    "stash_list_response": StashListReply,
    "validate_branch_response": ValidateBranchReply,
    "branch_suggestions_response": BranchSuggestionsReply,
    "github_search_response": GitHubSearchReply,
}

CHECKOUT_UNIONS: dict[str, Callable[[dict[str, Any]], Wire]] = {
    "checkout_status_response": _status,
    "checkout_status_update": _status_update,
}
"""Outbound types whose payload is a union: validated by its discriminating fields."""
