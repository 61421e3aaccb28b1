"""Branch names: whether one is valid and where it exists, and suggestions for a picker.

Validation applies Git's own ref-name rules in-process (:mod:`paseo.git.refname`) and looks
refs up with dulwich: no process. Suggestions list local and ``origin`` branches newest commit
first with one ``for-each-ref``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from paseo.git.checkout import READ_ENV, locate
from paseo.git.facts import ref_oid
from paseo.git.refname import branch_name_problem
from paseo.git.runner import GitRunner

MAX_SUGGESTIONS = 200


@dataclass(frozen=True)
class BranchCheck:
    name: str
    problem: str | None
    """Why Git would refuse the name; ``None`` when it is valid."""
    exists: bool
    resolved_ref: str | None
    """The branch (``name``) or, when only the remote has it, ``origin/<name>``."""
    is_remote: bool


@dataclass(frozen=True)
class BranchSuggestion:
    name: str
    committer_date: int
    """Seconds since the epoch of the branch's newest commit."""
    has_local: bool
    has_remote: bool


async def check(cwd: str, name: str) -> BranchCheck:
    await asyncio.to_thread(locate, cwd)
    short = name.removeprefix("refs/heads/")
    problem = branch_name_problem(short)
    if problem is not None:
        return BranchCheck(name, problem, False, None, False)
    if await asyncio.to_thread(ref_oid, cwd, f"refs/heads/{short}"):
        return BranchCheck(name, None, True, short, False)
    remote = short.removeprefix("origin/")
    if await asyncio.to_thread(ref_oid, cwd, f"refs/remotes/origin/{remote}"):
        return BranchCheck(name, None, True, f"origin/{remote}", True)
    return BranchCheck(name, None, False, None, False)


def parse_refs(output: str) -> list[BranchSuggestion]:
    """``for-each-ref --format=%(refname)%00%(committerdate:unix)`` lines, merged by name
    (a local branch and its ``origin`` copy are one suggestion), newest first."""
    found: dict[str, BranchSuggestion] = {}
    for line in output.splitlines():
        ref, _, date = line.partition("\0")
        if ref.startswith("refs/heads/"):
            name, local = ref[len("refs/heads/") :], True
        elif ref.startswith("refs/remotes/origin/"):
            name, local = ref[len("refs/remotes/origin/") :], False
        else:
            continue
        if name == "HEAD":
            continue
        stamp = int(date) if date.strip().isdigit() else 0
        seen = found.get(name)
        found[name] = BranchSuggestion(
            name=name,
            committer_date=max(stamp, seen.committer_date if seen else 0),
            has_local=local or (seen.has_local if seen else False),
            has_remote=(not local) or (seen.has_remote if seen else False),
        )
    return sorted(found.values(), key=lambda b: (-b.committer_date, b.name))


async def suggest(
    runner: GitRunner, cwd: str, *, query: str = "", limit: int = 50
) -> list[BranchSuggestion]:
    """Branches whose name contains ``query`` (case-insensitive), newest first."""
    await asyncio.to_thread(locate, cwd)
    result = await runner.run(
        [
            "for-each-ref",
            "--format=%(refname)%00%(committerdate:unix)",
            "refs/heads",
            "refs/remotes/origin",
        ],
        cwd=cwd,
        env=READ_ENV,
    )
    needle = query.strip().lower()
    branches = [b for b in parse_refs(result.stdout) if needle in b.name.lower()]
    return branches[: max(1, min(limit, MAX_SUGGESTIONS))]
