"""The git and checkout panel: ``checkout_*``, ``stash_*``, ``validate_branch_request``,
``branch_suggestions_request``, ``pull_request_timeline_request`` and
``github_search_request`` → this daemon's ``git.*`` methods, through the session (so with its
access: a ``cwd`` a remote session may not open is refused ``NOT_ALLOWED``).

Every reply has the TypeScript daemon's shape: failures are carried in the reply's ``error``
(``CheckoutError`` codes: ``NOT_GIT_REPO``, ``MERGE_CONFLICT``, ``NOT_ALLOWED``, else
``UNKNOWN`` with the daemon's message, which says what to do), never as ``rpc_error``. After
a change every diff subscription of the session is refreshed at once, without waiting for its
file watch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers import checkout_diff, checkout_status
from paseo_tswire.handlers.checkout_diff import error_of
from paseo_tswire.models import checkout as ck

GITHUB_UNAVAILABLE = "github_unavailable"


def _changed(session: ClientSession) -> None:
    """This session changed a checkout: refresh its diffs and statuses now."""
    checkout_diff.poke(session)
    checkout_status.poke(session)


async def _ok(
    session: ClientSession, reply: str, msg: ck.CwdRequest, method: str, params: dict[str, Any]
) -> None:
    """Call ``method`` and answer ``reply`` with ``{cwd, success, error}``."""
    error: ck.CheckoutError | None = None
    try:
        await session.call(method, {"cwd": msg.cwd, **params})
    except RpcFailure as exc:
        error = error_of(exc)
    _changed(session)
    await session.push(
        reply,
        ck.CheckoutOk(cwd=msg.cwd, success=error is None, error=error, requestId=msg.requestId),
    )


FALLBACK_COMMIT_MESSAGE = "Update files"
"""The message of a commit the app makes without one when none can be generated (no agent
answered): the TypeScript daemon's own fallback, so the app's one-click commit still lands."""


async def _commit_message(session: ClientSession, cwd: str) -> str:
    """A generated message for an empty one (the app's one-click commit sends none)."""
    try:
        found = await session.call("metadata.commit-message", {"cwd": cwd})
    except RpcFailure:
        return FALLBACK_COMMIT_MESSAGE
    subject = str(found.get("subject") or "").strip() if found.get("generated") else ""
    if not subject:
        return FALLBACK_COMMIT_MESSAGE
    body = str(found.get("body") or "").strip()
    return f"{subject}\n\n{body}" if body else subject


async def commit(session: ClientSession, msg: ck.CommitRequest) -> None:
    message = (msg.message or "").strip() or await _commit_message(session, msg.cwd)
    all_ = msg.addAll if msg.addAll is not None else True
    await _ok(
        session, "checkout_commit_response", msg, "git.commit", {"message": message, "all": all_}
    )


async def merge(session: ClientSession, msg: ck.MergeRequest) -> None:
    if msg.requireCleanTarget:
        try:
            found = await session.call("git.status", {"cwd": msg.cwd})
        except RpcFailure as exc:
            found = {"dirty": False}
            error: ck.CheckoutError | None = error_of(exc)
        else:
            error = None
        if error is None and found.get("dirty"):
            error = ck.CheckoutError(
                code="UNKNOWN",
                message="the checkout has uncommitted changes: commit or stash them first",
            )
        if error is not None:
            await session.push(
                "checkout_merge_response",
                ck.CheckoutOk(cwd=msg.cwd, success=False, error=error, requestId=msg.requestId),
            )
            return
    params: dict[str, Any] = {"strategy": msg.strategy or "merge"}
    if msg.baseRef:
        params["baseRef"] = msg.baseRef
    await _ok(session, "checkout_merge_response", msg, "git.merge", params)


async def merge_from_base(session: ClientSession, msg: ck.MergeFromBaseRequest) -> None:
    params: dict[str, Any] = {
        "requireClean": msg.requireCleanTarget if msg.requireCleanTarget is not None else True
    }
    if msg.baseRef:
        params["baseRef"] = msg.baseRef
    await _ok(session, "checkout_merge_from_base_response", msg, "git.mergeFromBase", params)


async def pull(session: ClientSession, msg: ck.CwdRequest) -> None:
    await _ok(session, "checkout_pull_response", msg, "git.pull", {})


async def push(session: ClientSession, msg: ck.CwdRequest) -> None:
    # The app's push button publishes a new branch too, as the TypeScript daemon's does.
    await _ok(session, "checkout_push_response", msg, "git.push", {"setUpstream": True})


async def switch_branch(session: ClientSession, msg: ck.SwitchBranchRequest) -> None:
    try:
        found = await session.call("git.switch", {"cwd": msg.cwd, "branch": msg.branch})
    except RpcFailure as exc:
        reply = ck.SwitchReply(
            cwd=msg.cwd,
            success=False,
            branch=msg.branch,
            error=error_of(exc),
            requestId=msg.requestId,
        )
    else:
        reply = ck.SwitchReply(
            cwd=msg.cwd,
            success=True,
            branch=msg.branch,
            source=found["source"],
            error=None,
            requestId=msg.requestId,
        )
    _changed(session)
    await session.push("checkout_switch_branch_response", reply)


async def stash_save(session: ClientSession, msg: ck.StashSaveRequest) -> None:
    params = {"label": msg.branch.strip()} if msg.branch and msg.branch.strip() else {}
    await _ok(session, "stash_save_response", msg, "git.stash.save", params)


async def stash_pop(session: ClientSession, msg: ck.StashPopRequest) -> None:
    await _ok(session, "stash_pop_response", msg, "git.stash.pop", {"index": msg.stashIndex})


async def stash_list(session: ClientSession, msg: ck.StashListRequest) -> None:
    paseo_only = msg.paseoOnly is not False
    try:
        found = await session.call("git.stash.list", {"cwd": msg.cwd, "paseoOnly": paseo_only})
    except RpcFailure as exc:
        reply = ck.StashListReply(
            cwd=msg.cwd, entries=[], error=error_of(exc), requestId=msg.requestId
        )
    else:
        reply = ck.StashListReply(
            cwd=msg.cwd,
            entries=[ck.StashEntry(**e) for e in found.get("entries") or []],
            error=None,
            requestId=msg.requestId,
        )
    await session.push("stash_list_response", reply)


async def validate_branch(session: ClientSession, msg: ck.ValidateBranchRequest) -> None:
    error: str | None
    try:
        found = await session.call("git.branch.check", {"cwd": msg.cwd, "name": msg.branchName})
    except RpcFailure as exc:
        found, error = {}, exc.message
    else:
        error = None if found["valid"] else f"invalid branch name: {found['problem']}"
    await session.push(
        "validate_branch_response",
        ck.ValidateBranchReply(
            exists=bool(found.get("exists")),
            resolvedRef=found.get("resolvedRef"),
            isRemote=bool(found.get("isRemote")),
            error=error,
            requestId=msg.requestId,
        ),
    )


async def branch_suggestions(session: ClientSession, msg: ck.BranchSuggestionsRequest) -> None:
    params: dict[str, Any] = {"cwd": msg.cwd, "query": msg.query or ""}
    if msg.limit is not None:
        params["limit"] = msg.limit
    try:
        found = await session.call("git.branch.suggest", params)
    except RpcFailure as exc:
        reply = ck.BranchSuggestionsReply(
            branches=[], branchDetails=[], error=exc.message, requestId=msg.requestId
        )
    else:
        details = [ck.BranchDetail(**b) for b in found.get("branches") or []]
        reply = ck.BranchSuggestionsReply(
            branches=[b.name for b in details],
            branchDetails=details,
            error=None,
            requestId=msg.requestId,
        )
    await session.push("branch_suggestions_response", reply)


async def pr_create(session: ClientSession, msg: ck.PrCreateRequest) -> None:
    params: dict[str, Any] = {"cwd": msg.cwd, "body": msg.body or ""}
    if msg.title and msg.title.strip():
        params["title"] = msg.title.strip()
    if msg.baseRef:
        params["baseRef"] = msg.baseRef
    try:
        found = await session.call("git.pr.create", params)
    except RpcFailure as exc:
        reply = ck.PrCreated(
            cwd=msg.cwd, url=None, number=None, error=error_of(exc), requestId=msg.requestId
        )
    else:
        reply = ck.PrCreated(
            cwd=msg.cwd,
            url=found["url"],
            number=found.get("number"),
            error=None,
            requestId=msg.requestId,
        )
    await session.push("checkout_pr_create_response", reply)


def _pr_status(raw: dict[str, Any]) -> ck.PrStatus:
    return ck.PrStatus(
        number=raw.get("number"),
        url=raw["url"],
        title=raw["title"],
        state=raw["state"],
        baseRefName=raw["baseRefName"],
        headRefName=raw["headRefName"],
        isMerged=raw["isMerged"],
        isDraft=raw["isDraft"],
        checks=[
            ck.PrCheck(
                name=c["name"], status=c["status"], url=c.get("url"), workflow=c.get("workflow")
            )
            for c in raw.get("checks") or []
        ],
        checksStatus=raw.get("checksStatus"),
        reviewDecision=raw.get("reviewDecision"),
        repoOwner=raw.get("repoOwner"),
        repoName=raw.get("repoName"),
    )


async def pr_status(session: ClientSession, msg: ck.CwdRequest) -> None:
    try:
        found = await session.call("git.pr.status", {"cwd": msg.cwd})
    except RpcFailure as exc:
        reply = ck.PrStatusReply(
            cwd=msg.cwd,
            status=None,
            githubFeaturesEnabled=exc.code != GITHUB_UNAVAILABLE,
            error=error_of(exc),
            requestId=msg.requestId,
        )
    else:
        pr = found.get("pullRequest")
        reply = ck.PrStatusReply(
            cwd=msg.cwd,
            status=_pr_status(pr) if pr else None,
            githubFeaturesEnabled=True,
            error=None,
            requestId=msg.requestId,
        )
    await session.push("checkout_pr_status_response", reply)


def _timeline_item(raw: dict[str, Any]) -> ck.TimelineReview | ck.TimelineComment:
    fields = {k: raw[k] for k in ("id", "author", "body", "createdAt", "url")}
    if raw.get("kind") == "review":
        return ck.TimelineReview(**fields, reviewState=raw.get("reviewState") or "commented")
    return ck.TimelineComment(**fields)


async def pr_timeline(session: ClientSession, msg: ck.PrTimelineRequest) -> None:
    number = int(msg.prNumber)
    params = {"cwd": msg.cwd, "number": number, "owner": msg.repoOwner, "repo": msg.repoName}
    try:
        found = await session.call("git.pr.timeline", params)
    except RpcFailure as exc:
        reply = ck.TimelineReply(
            cwd=msg.cwd,
            prNumber=number,
            items=[],
            truncated=False,
            error=ck.TimelineError(kind="unknown", message=exc.message),
            requestId=msg.requestId,
            githubFeaturesEnabled=exc.code != GITHUB_UNAVAILABLE,
        )
    else:
        reply = ck.TimelineReply(
            cwd=msg.cwd,
            prNumber=number,
            items=[_timeline_item(i) for i in found.get("items") or []],
            truncated=False,
            error=None,
            requestId=msg.requestId,
            githubFeaturesEnabled=True,
        )
    await session.push("pull_request_timeline_response", reply)


async def github_search(session: ClientSession, msg: ck.GitHubSearchRequest) -> None:
    params: dict[str, Any] = {"cwd": msg.cwd, "query": msg.query}
    if msg.limit is not None:
        params["limit"] = msg.limit
    if msg.kinds:
        params["kinds"] = list(msg.kinds)
    try:
        found = await session.call("git.github.search", params)
    except RpcFailure as exc:
        reply = ck.GitHubSearchReply(
            items=[],
            githubFeaturesEnabled=exc.code != GITHUB_UNAVAILABLE,
            error=exc.message,
            requestId=msg.requestId,
        )
    else:
        reply = ck.GitHubSearchReply(
            items=[ck.GitHubItem(**i) for i in found.get("items") or []],
            githubFeaturesEnabled=True,
            error=None,
            requestId=msg.requestId,
        )
    await session.push("github_search_response", reply)


Handler = Callable[[ClientSession, Any], Awaitable[None]]

TABLE: dict[str, tuple[type[BaseModel], Handler]] = {
    "checkout_status_request": (ck.CwdRequest, checkout_status.status),
    "subscribe_checkout_diff_request": (ck.SubscribeDiff, checkout_diff.subscribe),
    "unsubscribe_checkout_diff_request": (ck.UnsubscribeDiff, checkout_diff.unsubscribe),
    "checkout_commit_request": (ck.CommitRequest, commit),
    "checkout_merge_request": (ck.MergeRequest, merge),
    "checkout_merge_from_base_request": (ck.MergeFromBaseRequest, merge_from_base),
    "checkout_pull_request": (ck.CwdRequest, pull),
    "checkout_push_request": (ck.CwdRequest, push),
    "checkout_switch_branch_request": (ck.SwitchBranchRequest, switch_branch),
    "stash_save_request": (ck.StashSaveRequest, stash_save),
    "stash_pop_request": (ck.StashPopRequest, stash_pop),
    "stash_list_request": (ck.StashListRequest, stash_list),
    "validate_branch_request": (ck.ValidateBranchRequest, validate_branch),
    "branch_suggestions_request": (ck.BranchSuggestionsRequest, branch_suggestions),
    "checkout_pr_create_request": (ck.PrCreateRequest, pr_create),
    "checkout_pr_status_request": (ck.CwdRequest, pr_status),
    "pull_request_timeline_request": (ck.PrTimelineRequest, pr_timeline),
    "github_search_request": (ck.GitHubSearchRequest, github_search),
}
"""The checkout panel's part of :data:`paseo_tswire.dispatch.TABLE`."""
