"""``git.*``: a checkout's status, diff, commits, merges, pull/push, branches, stashes and its
GitHub pull requests, for local and remote sessions.

Every method names a directory (``cwd``) that must pass the same check as opening it as a
workspace (:meth:`~paseo.workspaces.provisioning.WorkspaceProvisioningService.check_path`: a
remote session only under the home directory or a known project, nobody in the daemon's state
root); git then runs there, through the daemon's one limiter (:mod:`paseo.git`).

The git operations (:mod:`paseo.git.changes`, ``checkout``, ``branches``, ``stash``, ``gh``) are
imported by the handler that runs them: registering the methods at start needs only the models.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import BaseModel

from paseo.git.facts import default_branch, normalize_path
from paseo.git.runner import GitRunner
from paseo.projects.paths import is_within
from paseo.services import ServiceRef
from paseo.workspaces import git_models as m
from paseo.workspaces.common import owner_method

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.git.diffparse import FileDiff
    from paseo.git.github import GitHub
    from paseo.workspaces.service import Placement


@dataclass
class GitDesk:
    """What the ``git`` methods use: the runner, ``gh``, and placement (path checks, which
    checkouts are Paseo-owned worktrees)."""

    runner: GitRunner
    gh: Callable[[], GitHub]
    """``gh``, built on first use (:attr:`paseo.git.service.GitService.github`)."""
    placement: Placement

    @property
    def github(self) -> GitHub:
        return self.gh()

    async def cwd(self, ctx: RpcContext, raw: str) -> str:
        return await self.placement.workspaces.check_path(raw, session_kind=ctx.session_kind)

    async def owned(self, root: str) -> dict[str, Any] | None:
        """The managed worktree whose checkout is ``root``, if any."""
        managed = normalize_path(self.placement.worktrees.worktrees_root())
        if not is_within(normalize_path(root), managed):
            return None
        for row in await self.placement.worktrees.list():
            if normalize_path(str(row["path"])) == normalize_path(root):
                return row
        return None


GitRef: TypeAlias = ServiceRef[GitDesk]


def _file_view(change: FileDiff) -> m.DiffFileView:
    return m.DiffFileView(
        path=change.path,
        oldPath=change.old_path,
        isNew=change.is_new,
        isDeleted=change.is_deleted,
        additions=change.additions,
        deletions=change.deletions,
        status=change.status,
        hunks=[
            m.DiffHunkView(
                oldStart=h.old_start,
                oldCount=h.old_count,
                newStart=h.new_start,
                newCount=h.new_count,
                lines=[m.DiffLineView(type=ln.type, content=ln.content) for ln in h.lines],
            )
            for h in change.hunks
        ],
    )


async def status(desk: GitDesk, ctx: RpcContext, p: m.CwdParams) -> m.StatusResult:
    from paseo.git import checkout

    cwd = await desk.cwd(ctx, p.cwd)
    facts = await asyncio.to_thread(checkout.locate, cwd)
    owned = await desk.owned(facts.toplevel)
    base_ref = str(owned["baseRef"]) if owned and owned.get("baseRef") else None
    found = await checkout.read_status(desk.runner, cwd, base_ref=base_ref)
    report = found.report
    return m.StatusResult(
        cwd=cwd,
        repoRoot=found.facts.toplevel,
        mainRepoRoot=found.facts.main_repo_root,
        isLinkedWorktree=found.facts.is_linked_worktree,
        isPaseoOwnedWorktree=owned is not None,
        branch=report.branch,
        headOid=report.head_oid,
        upstream=report.upstream,
        ahead=report.ahead,
        behind=report.behind,
        baseRef=base_ref
        or (found.base.ref if found.base else None)
        or await asyncio.to_thread(default_branch, cwd),
        base=m.BaseView(ref=found.base.ref, ahead=found.base.ahead, behind=found.base.behind)
        if found.base
        else None,
        remoteUrl=found.facts.remote_url,
        dirty=report.dirty,
        files=[
            m.FileView(
                path=f.path,
                origPath=f.orig_path,
                index=f.index,
                worktree=f.worktree,
                state=f.state,
            )
            for f in report.files
        ],
        truncated=found.truncated,
    )


async def diff(desk: GitDesk, ctx: RpcContext, p: m.DiffParams) -> m.DiffResult:
    from paseo.git import checkout

    cwd = await desk.cwd(ctx, p.cwd)
    base_ref = p.baseRef
    if p.scope == "base" and base_ref is None:
        facts = await asyncio.to_thread(checkout.locate, cwd)
        owned = await desk.owned(facts.toplevel)
        base_ref = str(owned["baseRef"]) if owned and owned.get("baseRef") else None
    found = await checkout.read_diff(
        desk.runner, cwd, scope=p.scope, base_ref=base_ref, ignore_whitespace=p.ignoreWhitespace
    )
    return m.DiffResult(
        cwd=cwd,
        scope=p.scope,
        files=[_file_view(f) for f in found.files],
        truncated=found.truncated,
    )


async def commit(desk: GitDesk, ctx: RpcContext, p: m.CommitParams) -> m.CommitResult:
    from paseo.git import changes

    cwd = await desk.cwd(ctx, p.cwd)
    done = await changes.commit(desk.runner, cwd, p.message, add_all=p.all)
    return m.CommitResult(cwd=cwd, commit=done.oid, summary=done.summary)


async def merge(desk: GitDesk, ctx: RpcContext, p: m.MergeParams) -> m.MergeResult:
    from paseo.git import changes, checkout

    cwd = await desk.cwd(ctx, p.cwd)
    base_ref = p.baseRef
    if base_ref is None:
        facts = await asyncio.to_thread(checkout.locate, cwd)
        owned = await desk.owned(facts.toplevel)
        base_ref = str(owned["baseRef"]) if owned and owned.get("baseRef") else None
    # The base's checkout may be another directory: the caller must be allowed there too,
    # before anything in it changes.
    where = await changes.merge_into_base(
        desk.runner,
        cwd,
        base_ref=base_ref,
        squash=p.strategy == "squash",
        allow=lambda target: desk.cwd(ctx, target),
    )
    return m.MergeResult(cwd=cwd, mergedIn=where)


async def merge_from_base(
    desk: GitDesk, ctx: RpcContext, p: m.MergeFromBaseParams
) -> m.MergeFromBaseResult:
    from paseo.git import changes, checkout

    cwd = await desk.cwd(ctx, p.cwd)
    base_ref = p.baseRef
    if base_ref is None:
        facts = await asyncio.to_thread(checkout.locate, cwd)
        owned = await desk.owned(facts.toplevel)
        base_ref = str(owned["baseRef"]) if owned and owned.get("baseRef") else None
    merged = await changes.merge_from_base(
        desk.runner, cwd, base_ref=base_ref, require_clean=p.requireClean
    )
    return m.MergeFromBaseResult(cwd=cwd, baseRef=merged)


async def pull(desk: GitDesk, ctx: RpcContext, p: m.CwdParams) -> m.OkResult:
    from paseo.git import changes

    cwd = await desk.cwd(ctx, p.cwd)
    await changes.pull(desk.runner, cwd)
    return m.OkResult(cwd=cwd)


async def push(desk: GitDesk, ctx: RpcContext, p: m.PushParams) -> m.PushResult:
    from paseo.git import changes

    cwd = await desk.cwd(ctx, p.cwd)
    upstream = await changes.push(desk.runner, cwd, set_upstream=p.setUpstream)
    return m.PushResult(cwd=cwd, upstream=upstream)


async def switch(desk: GitDesk, ctx: RpcContext, p: m.SwitchParams) -> m.SwitchResult:
    from paseo.git import changes

    cwd = await desk.cwd(ctx, p.cwd)
    done = await changes.switch(desk.runner, cwd, p.branch)
    return m.SwitchResult(cwd=cwd, branch=done.branch, source=done.source)


async def stash_save(desk: GitDesk, ctx: RpcContext, p: m.StashSaveParams) -> m.OkResult:
    from paseo.git import stash

    cwd = await desk.cwd(ctx, p.cwd)
    await stash.save(desk.runner, cwd, label=p.label)
    return m.OkResult(cwd=cwd)


async def stash_pop(desk: GitDesk, ctx: RpcContext, p: m.StashPopParams) -> m.OkResult:
    from paseo.git import stash

    cwd = await desk.cwd(ctx, p.cwd)
    await stash.pop(desk.runner, cwd, p.index)
    return m.OkResult(cwd=cwd)


async def stash_list(desk: GitDesk, ctx: RpcContext, p: m.StashListParams) -> m.StashListResult:
    from paseo.git import stash

    cwd = await desk.cwd(ctx, p.cwd)
    entries = await stash.list_stashes(desk.runner, cwd, paseo_only=p.paseoOnly)
    return m.StashListResult(
        cwd=cwd,
        entries=[
            m.StashView(index=e.index, message=e.message, branch=e.branch, isPaseo=e.is_paseo)
            for e in entries
        ],
    )


async def branch_check(
    desk: GitDesk, ctx: RpcContext, p: m.BranchCheckParams
) -> m.BranchCheckResult:
    from paseo.git import branches

    cwd = await desk.cwd(ctx, p.cwd)
    found = await branches.check(cwd, p.name)
    return m.BranchCheckResult(
        name=p.name,
        valid=found.problem is None,
        problem=found.problem,
        exists=found.exists,
        resolvedRef=found.resolved_ref,
        isRemote=found.is_remote,
    )


async def branch_suggest(
    desk: GitDesk, ctx: RpcContext, p: m.BranchSuggestParams
) -> m.BranchSuggestResult:
    from paseo.git import branches

    cwd = await desk.cwd(ctx, p.cwd)
    found = await branches.suggest(desk.runner, cwd, query=p.query, limit=p.limit)
    return m.BranchSuggestResult(
        branches=[
            m.BranchView(
                name=b.name,
                committerDate=b.committer_date,
                hasLocal=b.has_local,
                hasRemote=b.has_remote,
            )
            for b in found
        ]
    )


async def pr_create(desk: GitDesk, ctx: RpcContext, p: m.PrCreateParams) -> m.PrCreateResult:
    from paseo.git import changes

    cwd = await desk.cwd(ctx, p.cwd)
    await desk.github.require(cwd)
    branch = await changes.current_branch(cwd, "open a pull request")
    title = (p.title or "").strip()
    if not title:
        last = await desk.runner.run(["log", "-1", "--format=%s"], cwd=cwd)
        title = last.stdout.strip() or branch
    await changes.push(desk.runner, cwd, set_upstream=True)
    url, number = await desk.github.pr_create(
        cwd,
        title=title,
        body=p.body,
        base=(p.baseRef or "").removeprefix("origin/") or None,
        head=branch,
    )
    return m.PrCreateResult(url=url, number=number)


async def pr_status(desk: GitDesk, ctx: RpcContext, p: m.CwdParams) -> m.PrStatusResult:
    cwd = await desk.cwd(ctx, p.cwd)
    found = await desk.github.pr_status(cwd)
    view = None
    if found is not None:
        view = m.PrView(
            number=found.number,
            url=found.url,
            title=found.title,
            state=found.state,
            baseRefName=found.base,
            headRefName=found.head,
            isMerged=found.merged,
            isDraft=found.draft,
            reviewDecision=found.review_decision,
            checks=found.checks,
            checksStatus=found.checks_status,
            repoOwner=found.owner,
            repoName=found.repo,
        )
    return m.PrStatusResult(cwd=cwd, pullRequest=view)


async def pr_timeline(desk: GitDesk, ctx: RpcContext, p: m.PrTimelineParams) -> m.ItemsResult:
    cwd = await desk.cwd(ctx, p.cwd)
    items = await desk.github.pr_timeline(cwd, number=p.number, owner=p.owner, repo=p.repo)
    return m.ItemsResult(items=items)


async def search(desk: GitDesk, ctx: RpcContext, p: m.SearchParams) -> m.ItemsResult:

    cwd = await desk.cwd(ctx, p.cwd)
    items = await desk.github.search(cwd, query=p.query, limit=p.limit, kinds=list(p.kinds))
    return m.ItemsResult(items=items)


Handler: TypeAlias = Callable[[GitDesk, "RpcContext", Any], Awaitable[Any]]

_METHODS: list[tuple[str, Handler, type[BaseModel], type[BaseModel], str]] = [
    (
        "git.status",
        status,
        m.CwdParams,
        m.StatusResult,
        "A checkout's branch, upstream, ahead/behind and changed files",
    ),
    (
        "git.diff",
        diff,
        m.DiffParams,
        m.DiffResult,
        "A checkout's changes per file (unstaged, staged, uncommitted or against a base), "
        "bounded: a file past the bounds is listed too_large without hunks",
    ),
    ("git.commit", commit, m.CommitParams, m.CommitResult, "Commit (every change by default)"),
    (
        "git.merge",
        merge,
        m.MergeParams,
        m.MergeResult,
        "Merge the checked-out branch into its base (a conflict is undone and reported)",
    ),
    (
        "git.mergeFromBase",
        merge_from_base,
        m.MergeFromBaseParams,
        m.MergeFromBaseResult,
        "Merge the base into the checked-out branch (a conflict stays, with how to abort)",
    ),
    ("git.pull", pull, m.CwdParams, m.OkResult, "Pull the branch's upstream"),
    ("git.push", push, m.PushParams, m.PushResult, "Push the branch to its upstream"),
    (
        "git.switch",
        switch,
        m.SwitchParams,
        m.SwitchResult,
        "Switch to a local branch, or one of origin's (tracking it)",
    ),
    (
        "git.stash.save",
        stash_save,
        m.StashSaveParams,
        m.OkResult,
        "Stash every change, untracked files included",
    ),
    ("git.stash.pop", stash_pop, m.StashPopParams, m.OkResult, "Apply and drop a stash"),
    ("git.stash.list", stash_list, m.StashListParams, m.StashListResult, "The stashes"),
    (
        "git.branch.check",
        branch_check,
        m.BranchCheckParams,
        m.BranchCheckResult,
        "Whether a branch name is valid and where it exists",
    ),
    (
        "git.branch.suggest",
        branch_suggest,
        m.BranchSuggestParams,
        m.BranchSuggestResult,
        "Local and origin branches matching a query, newest first",
    ),
    (
        "git.pr.create",
        pr_create,
        m.PrCreateParams,
        m.PrCreateResult,
        "Push the branch and open its pull request (needs `gh`, signed in)",
    ),
    (
        "git.pr.status",
        pr_status,
        m.CwdParams,
        m.PrStatusResult,
        "The branch's pull request and its checks (needs `gh`)",
    ),
    (
        "git.pr.timeline",
        pr_timeline,
        m.PrTimelineParams,
        m.ItemsResult,
        "A pull request's reviews and comments (needs `gh`)",
    ),
    (
        "git.github.search",
        search,
        m.SearchParams,
        m.ItemsResult,
        "Issues and pull requests of the repository (needs `gh`)",
    ),
]


def git_group(ref: GitRef) -> RpcMethodGroup:
    """The ``git`` method group, reaching its :class:`GitDesk` through ``ref``."""

    def bind(
        name: str, handler: Handler, params: type[BaseModel], result: type[BaseModel], summary: str
    ) -> RpcMethod:
        async def call(ctx: RpcContext, value: Any) -> Any:
            return await handler(ref.get(), ctx, value)

        return owner_method(name, call, params, result, summary)

    return RpcMethodGroup("git", [bind(*entry) for entry in _METHODS])
