"""Changing a checkout: commit, merge (into the base, or the base into the branch), pull, push
and switching branches — each a fixed git argv in the caller's directory, through the runner
(so the daemon's limiter), with its failures turned into errors that say what to do.

Conflicts: a merge of the base into the branch (or a pull) that conflicts is left in progress
in the user's own checkout — they resolve it there — and the error names the files and the
command that goes back. A merge *into the base* runs in the base branch's checkout, which may
be another worktree the user is not looking at, so a conflict there is undone at once and
only reported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from paseo_hookspecs.errors import Conflict, InvalidParams

from paseo.git.checkout import READ_ENV, locate
from paseo.git.facts import default_branch, resolve_commitish
from paseo.git.porcelain import parse_status
from paseo.git.problems import (
    DirtyCheckout,
    MergeConflict,
    NoRemote,
    NothingToCommit,
    NoUpstream,
    classify,
    conflict_message,
)
from paseo.git.refname import validate_branch_name
from paseo.git.runner import GitCommandFailed, GitRunner

WRITE_TIMEOUT = 120.0
NETWORK_TIMEOUT = 300.0
# A commit made for the user never opens an editor or asks a signing agent for a passphrase
# that no terminal can type.
_NO_PROMPTS = ("-c", "commit.gpgsign=false", "-c", "core.editor=true")


@dataclass(frozen=True)
class CommitOutcome:
    oid: str
    summary: str


@dataclass(frozen=True)
class SwitchOutcome:
    branch: str
    source: str
    """``local`` (the branch existed) or ``remote`` (created tracking ``origin/<branch>``)."""


async def _run(
    runner: GitRunner,
    args: list[str],
    cwd: str,
    *,
    branch: str | None = None,
    timeout: float = WRITE_TIMEOUT,  # noqa: ASYNC109 - passed on to the runner
) -> str:
    try:
        result = await runner.run(args, cwd=cwd, timeout=timeout)
    except GitCommandFailed as exc:
        raise classify(exc, cwd=cwd, branch=branch) from None
    return result.stdout


async def _conflicted(runner: GitRunner, cwd: str) -> list[str]:
    result = await runner.run(
        ["status", "--porcelain=v2", "-z"], cwd=cwd, env=READ_ENV, check=False
    )
    return parse_status(result.stdout).conflicts if result.ok else []


async def _dirty(runner: GitRunner, cwd: str) -> bool:
    result = await runner.run(
        ["status", "--porcelain=v2", "-z", "--untracked-files=no"], cwd=cwd, env=READ_ENV
    )
    return bool(parse_status(result.stdout).files)


async def current_branch(cwd: str, action: str) -> str:
    facts = await asyncio.to_thread(locate, cwd)
    if facts.branch is None:
        raise Conflict(
            f"HEAD is detached in {cwd}: switch to a branch before you {action} "
            "(`paseo git switch BRANCH`)",
            data={"cwd": cwd},
        )
    return facts.branch


async def commit(
    runner: GitRunner, cwd: str, message: str, *, add_all: bool = True
) -> CommitOutcome:
    """Commit (every change, untracked files included, when ``add_all``)."""
    if not message.strip():
        raise InvalidParams("a commit needs a message", data={"cwd": cwd})
    await asyncio.to_thread(locate, cwd)
    if add_all:
        await _run(runner, ["add", "-A", "--", ":(top)"], cwd)
    staged = await runner.run(["diff", "--cached", "--quiet"], cwd=cwd, env=READ_ENV, check=False)
    facts = await asyncio.to_thread(locate, cwd)
    if staged.returncode == 0 and facts.head_oid is not None:
        raise NothingToCommit(
            "nothing to commit: no change is staged"
            + ("" if add_all else " (stage files with `git add`, or commit with --all)"),
            data={"cwd": cwd},
        )
    await _run(runner, [*_NO_PROMPTS, "commit", "-m", message], cwd)
    shown = await _run(runner, ["log", "-1", "--format=%H%x00%s"], cwd)
    oid, _, summary = shown.strip().partition("\0")
    return CommitOutcome(oid=oid, summary=summary)


async def merge_from_base(
    runner: GitRunner, cwd: str, *, base_ref: str | None = None, require_clean: bool = True
) -> str:
    """Merge the base branch (default: the repository's default branch) into the checked-out
    branch; the merged ref. A conflict stays for the user to resolve (see the module doc)."""
    branch = await current_branch(cwd, "merge")
    ref = base_ref or await asyncio.to_thread(default_branch, cwd)
    if not ref:
        raise InvalidParams("no base branch is known: name one", data={"cwd": cwd})
    if ref == branch:
        return ref
    if await asyncio.to_thread(resolve_commitish, cwd, ref) is None:
        raise InvalidParams(f"the base {ref!r} does not exist here", data={"baseRef": ref})
    if require_clean and await _dirty(runner, cwd):
        raise DirtyCheckout(
            "the checkout has uncommitted changes: commit or stash them before merging",
            data={"cwd": cwd},
        )
    try:
        await runner.run([*_NO_PROMPTS, "merge", "--no-edit", ref], cwd=cwd, timeout=WRITE_TIMEOUT)
    except GitCommandFailed as exc:
        files = await _conflicted(runner, cwd)
        if files:
            raise MergeConflict(
                conflict_message(
                    f"merging {ref} into {branch}", files, cwd=cwd, abort="git merge --abort"
                ),
                data={"files": files, "abort": "git merge --abort", "cwd": cwd},
            ) from None
        raise classify(exc, cwd=cwd, branch=branch) from None
    return ref


async def merge_into_base(
    runner: GitRunner,
    cwd: str,
    *,
    base_ref: str | None = None,
    squash: bool = False,
    worktree_of: dict[str, str] | None = None,
    allow: Callable[[str], Awaitable[object]] | None = None,
) -> str:
    """Merge the checked-out branch into the base branch; the checkout where it happened.

    It runs in the checkout that has the base branch checked out (``worktree_of``: branch →
    checkout path, from ``git worktree list``); when none has, in this one, switching to the
    base and back. A conflict is undone there (see the module doc). ``allow`` is awaited with
    that checkout before anything changes (the caller's path rules: it raises to refuse)."""
    branch = await current_branch(cwd, "merge")
    ref = (base_ref or await asyncio.to_thread(default_branch, cwd) or "").removeprefix("origin/")
    if not ref:
        raise InvalidParams("no base branch is known: name one", data={"cwd": cwd})
    validate_branch_name(ref)
    if ref == branch:
        return cwd
    where = (worktree_of or await worktrees_by_branch(runner, cwd)).get(ref)
    target = where or cwd
    if allow is not None:
        await allow(target)
    if await _dirty(runner, target):
        raise DirtyCheckout(
            f"{target} has uncommitted changes: commit or stash them before merging into {ref}",
            data={"cwd": target},
        )
    switched = where is None
    if switched:
        await _run(runner, ["switch", ref], target, branch=ref)
    try:
        merge = ["merge", "--squash", branch] if squash else ["merge", "--no-edit", branch]
        try:
            await runner.run([*_NO_PROMPTS, *merge], cwd=target, timeout=WRITE_TIMEOUT)
            if squash:
                message = f"Squash merge {branch} into {ref}"
                await runner.run(
                    [*_NO_PROMPTS, "commit", "-m", message],
                    cwd=target,
                    timeout=WRITE_TIMEOUT,
                )
        except GitCommandFailed as exc:
            files = await _conflicted(runner, target)
            if files:
                undo = ["reset", "--merge"] if squash else ["merge", "--abort"]
                await runner.run(undo, cwd=target, check=False)
                raise MergeConflict(
                    conflict_message(f"merging {branch} into {ref}", files, cwd=target, abort=None),
                    data={"files": files, "cwd": target},
                ) from None
            raise classify(exc, cwd=target, branch=ref) from None
    finally:
        if switched:
            await runner.run(["switch", branch], cwd=target, check=False)
    return target


async def worktrees_by_branch(runner: GitRunner, cwd: str) -> dict[str, str]:
    """Branch → the checkout that has it checked out (``git worktree list --porcelain``)."""
    listed = await runner.run(
        ["worktree", "list", "--porcelain", "-z"], cwd=cwd, env=READ_ENV, check=False
    )
    found: dict[str, str] = {}
    path: str | None = None
    for record in listed.stdout.split("\0"):
        if record.startswith("worktree "):
            path = record[len("worktree ") :]
        elif record.startswith("branch refs/heads/") and path is not None:
            found[record[len("branch refs/heads/") :]] = path
    return found


async def _upstream(runner: GitRunner, cwd: str) -> str | None:
    result = await runner.run(
        ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"],
        cwd=cwd,
        env=READ_ENV,
        check=False,
    )
    return result.stdout.strip() if result.ok and result.stdout.strip() else None


async def _remote(cwd: str) -> None:
    facts = await asyncio.to_thread(locate, cwd)
    if facts.remote_url is None:
        raise NoRemote(
            "this repository has no remote: add one with `git remote add origin URL`",
            data={"cwd": cwd},
        )


async def pull(runner: GitRunner, cwd: str) -> None:
    """Pull the branch's upstream (merging when they diverged, unless the user's config says
    to rebase). A conflict stays for the user to resolve."""
    branch = await current_branch(cwd, "pull")
    await _remote(cwd)
    if await _upstream(runner, cwd) is None:
        raise NoUpstream(
            f"the branch {branch!r} has no upstream to pull from: set it with "
            f"`git branch --set-upstream-to=origin/{branch}` (after a first push, "
            f"`paseo git push --set-upstream` does it)",
            data={"branch": branch, "command": f"git branch --set-upstream-to=origin/{branch}"},
        )
    try:
        await runner.run([*_NO_PROMPTS, "pull", "--no-edit"], cwd=cwd, timeout=NETWORK_TIMEOUT)
    except GitCommandFailed as exc:
        files = await _conflicted(runner, cwd)
        if files:
            raise MergeConflict(
                conflict_message(
                    f"pulling into {branch}", files, cwd=cwd, abort="git merge --abort"
                ),
                data={"files": files, "abort": "git merge --abort", "cwd": cwd},
            ) from None
        raise classify(exc, cwd=cwd, branch=branch) from None


async def push(runner: GitRunner, cwd: str, *, set_upstream: bool = False) -> str:
    """Push the branch to its upstream; the upstream. Without one, ``set_upstream`` pushes to
    ``origin/<branch>`` and records it; otherwise :class:`NoUpstream` names the command."""
    branch = await current_branch(cwd, "push")
    await _remote(cwd)
    upstream = await _upstream(runner, cwd)
    if upstream is None:
        if not set_upstream:
            raise NoUpstream(
                f"the branch {branch!r} has no upstream: push it with "
                f"`paseo git push --set-upstream` (git: `git push --set-upstream origin {branch}`)",
                data={"branch": branch, "command": f"git push --set-upstream origin {branch}"},
            )
        await _run(
            runner,
            ["push", "--set-upstream", "origin", branch],
            cwd,
            branch=branch,
            timeout=NETWORK_TIMEOUT,
        )
        return f"origin/{branch}"
    await _run(runner, ["push"], cwd, branch=branch, timeout=NETWORK_TIMEOUT)
    return upstream


async def switch(runner: GitRunner, cwd: str, branch: str) -> SwitchOutcome:
    """Switch to ``branch``: a local one, or a new one tracking ``origin/<branch>``."""
    validate_branch_name(branch)
    await asyncio.to_thread(locate, cwd)
    local = await asyncio.to_thread(resolve_commitish, cwd, f"refs/heads/{branch}")
    if local is not None:
        await _run(runner, ["switch", branch], cwd, branch=branch)
        return SwitchOutcome(branch, "local")
    remote = await asyncio.to_thread(resolve_commitish, cwd, f"refs/remotes/origin/{branch}")
    if remote is None:
        raise InvalidParams(
            f"no branch {branch!r} here or on origin (fetch first, or create it with "
            f"`git switch -c {branch}`)",
            data={"branch": branch},
        )
    await _run(runner, ["switch", "--track", f"origin/{branch}"], cwd, branch=branch)
    return SwitchOutcome(branch, "remote")
