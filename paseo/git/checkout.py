"""Reading a checkout: its status (branch, upstream, ahead/behind, changed files) and its diff
(per file, staged, unstaged or against a base, with bounded size).

Every git process goes through the daemon's :class:`~paseo.git.runner.GitRunner` (so its
limiter), as an argv, in the caller's directory. Untracked files have no patch in git, so
their contents are read here — only regular files inside the checkout, never through a
symbolic link (a link is shown as its target, as git shows one).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

from paseo_hookspecs.errors import InvalidParams

from paseo.git.diffparse import FileDiff, NumStat, parse_numstat, parse_patch, text_file_diff
from paseo.git.facts import RepoFacts, default_branch, read_facts, resolve_commitish
from paseo.git.porcelain import StatusReport, parse_status
from paseo.git.problems import not_a_checkout
from paseo.git.runner import GitRunner

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""Git's empty tree: what a diff compares against before the first commit."""

MAX_FILE_LINES = 20_000
"""A file with more changed lines than this is listed ``too_large`` without its hunks."""
MAX_DIFF_BYTES = 4 * 1024 * 1024
"""Patch text read for one diff at most; the files past it are ``too_large``."""
MAX_UNTRACKED_BYTES = 1024 * 1024
"""An untracked file larger than this is ``too_large`` (its contents are not read)."""
MAX_FILES = 2_000
"""Changed files one status or diff lists at most (``truncated`` says more were left out)."""

MAX_STATUS_BYTES = 8 * 1024 * 1024
"""``git status`` output read at most (a tree of a million untracked files must not be read
whole); the files past it are left out and the status says ``truncated``."""

# Reading must not take the index lock a user's own `git commit` needs at the same moment.
READ_ENV = {"GIT_OPTIONAL_LOCKS": "0"}
_PATCH_FLAGS = ("-c", "core.quotePath=false", "-c", "diff.noprefix=false")


@dataclass(frozen=True)
class BaseComparison:
    ref: str
    ahead: int
    behind: int


@dataclass(frozen=True)
class CheckoutStatus:
    cwd: str
    facts: RepoFacts
    report: StatusReport
    base: BaseComparison | None
    truncated: bool


@dataclass
class CheckoutDiff:
    cwd: str
    files: list[FileDiff] = field(default_factory=list)
    truncated: bool = False


def whole_records(output: str, truncated: bool) -> str:
    """``-z`` output without the record a byte bound cut in the middle (the parsers skip a
    two-path record left without its second path)."""
    if not truncated or "\0" not in output:
        return "" if truncated else output
    return output.rsplit("\0", 1)[0] + "\0"


def locate(cwd: str) -> RepoFacts:
    """The facts of the checkout holding ``cwd`` (blocking, in-process), or ``not_git_repo``."""
    facts = read_facts(cwd)
    if facts is None:
        raise not_a_checkout(cwd)
    return facts


async def read_status(
    runner: GitRunner, cwd: str, *, base_ref: str | None = None, max_files: int = MAX_FILES
) -> CheckoutStatus:
    """The checkout's status; ``base`` compares HEAD with ``base_ref`` (default: the
    repository's default branch) unless HEAD is that branch."""
    facts = await asyncio.to_thread(locate, cwd)
    result = await runner.run(
        ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"],
        cwd=cwd,
        env=READ_ENV,
        max_stdout=MAX_STATUS_BYTES,
    )
    report = parse_status(whole_records(result.stdout, result.truncated))
    truncated = result.truncated or len(report.files) > max_files
    if truncated:
        report = StatusReport(
            report.head_oid,
            report.branch,
            report.upstream,
            report.ahead,
            report.behind,
            report.files[:max_files],
        )
    base = await _compare_base(runner, cwd, report, base_ref)
    return CheckoutStatus(cwd, facts, report, base, truncated)


async def _compare_base(
    runner: GitRunner, cwd: str, report: StatusReport, base_ref: str | None
) -> BaseComparison | None:
    ref = base_ref or await asyncio.to_thread(default_branch, cwd)
    if ref is None or report.head_oid is None or ref == report.branch:
        return None
    resolved = await asyncio.to_thread(resolve_commitish, cwd, ref)
    if resolved is None:
        return None
    counted = await runner.run(
        ["rev-list", "--left-right", "--count", f"{resolved[1]}...HEAD"],
        cwd=cwd,
        env=READ_ENV,
        check=False,
    )
    parts = counted.stdout.split()
    if not counted.ok or len(parts) != 2:
        return None
    return BaseComparison(ref=ref, behind=int(parts[0]), ahead=int(parts[1]))


async def read_diff(
    runner: GitRunner,
    cwd: str,
    *,
    scope: str = "uncommitted",
    base_ref: str | None = None,
    ignore_whitespace: bool = False,
    max_file_lines: int = MAX_FILE_LINES,
    max_bytes: int = MAX_DIFF_BYTES,
    max_files: int = MAX_FILES,
) -> CheckoutDiff:
    """The changes of the checkout, per file.

    ``scope``: ``unstaged`` (working tree against the index), ``staged`` (index against HEAD),
    ``uncommitted`` (working tree against HEAD, untracked files included) or ``base`` (working
    tree against the merge base of HEAD and ``base_ref``, untracked included)."""
    facts = await asyncio.to_thread(locate, cwd)
    against = await _against(runner, cwd, facts, scope, base_ref)
    flags = ["--no-color", "--no-ext-diff", "-M"]
    if ignore_whitespace:
        flags.append("-w")
    numstat = await runner.run(
        [*_PATCH_FLAGS, "diff", *flags, "--numstat", "-z", *against],
        cwd=cwd,
        env=READ_ENV,
        max_stdout=max_bytes,
    )
    stats = parse_numstat(whole_records(numstat.stdout, numstat.truncated))
    out = CheckoutDiff(cwd=cwd, truncated=numstat.truncated or len(stats) > max_files)
    stats = stats[:max_files]
    big = [s for s in stats if not s.binary and s.lines > max_file_lines]
    patched: dict[str, FileDiff] = {}
    if any(not s.binary and s.lines <= max_file_lines for s in stats):
        excluded = [f":(top,exclude,literal){s.path}" for s in big]
        patch = await runner.run(
            [*_PATCH_FLAGS, "diff", *flags, "--patch", *against, "--", ":(top)", *excluded],
            cwd=cwd,
            env=READ_ENV,
            max_stdout=max_bytes,
        )
        parsed = parse_patch(patch.stdout)
        if patch.truncated and parsed:
            # The last section read was cut short: its hunks are incomplete.
            parsed[-1].hunks = []
            parsed[-1].status = "too_large"
        patched = {f.path: f for f in parsed}
        out.truncated = out.truncated or patch.truncated
    for stat in stats:
        out.files.append(_file_for(stat, patched.get(stat.path), max_file_lines))
    if scope in ("uncommitted", "base") and len(out.files) < max_files:
        listed = await runner.run(
            ["ls-files", "--others", "--exclude-standard", "--full-name", "-z", "--", ":(top)"],
            cwd=cwd,
            env=READ_ENV,
        )
        paths = [p for p in listed.stdout.split("\0") if p]
        room = max_files - len(out.files)
        out.truncated = out.truncated or len(paths) > room
        untracked = await asyncio.to_thread(
            _read_untracked, facts.toplevel, paths[:room], max_file_lines, max_bytes
        )
        out.files.extend(untracked)
    out.files.sort(key=lambda f: f.path)
    return out


async def _against(
    runner: GitRunner, cwd: str, facts: RepoFacts, scope: str, base_ref: str | None
) -> list[str]:
    """The revision arguments of ``git diff`` for ``scope``."""
    head = facts.head_oid or EMPTY_TREE
    if scope == "unstaged":
        return []
    if scope == "staged":
        return ["--cached", head]
    if scope == "uncommitted":
        return [head]
    if scope != "base":
        raise ValueError(f"unknown diff scope {scope!r}")
    ref = base_ref or await asyncio.to_thread(default_branch, cwd)
    resolved = await asyncio.to_thread(resolve_commitish, cwd, ref) if ref else None
    if resolved is None:
        raise InvalidParams(
            f"the base {ref!r} is not a branch, tag or commit of this repository"
            if ref
            else "this repository has no default branch to compare with: name a base",
            data={"cwd": cwd, "baseRef": ref},
        )
    if facts.head_oid is None:
        return [resolved[1]]
    merged = await runner.run(
        ["merge-base", resolved[1], "HEAD"], cwd=cwd, env=READ_ENV, check=False
    )
    return [merged.stdout.strip() if merged.ok and merged.stdout.strip() else resolved[1]]


def _file_for(stat: NumStat, parsed: FileDiff | None, max_file_lines: int) -> FileDiff:
    if stat.binary:
        change = parsed or FileDiff(path=stat.path, old_path=stat.old_path)
        change.status, change.hunks = "binary", []
        return change
    if parsed is None:
        change = FileDiff(path=stat.path, old_path=stat.old_path)
        change.status = "too_large" if stat.lines > max_file_lines else "ok"
    else:
        change = parsed
    change.additions = stat.additions or 0
    change.deletions = stat.deletions or 0
    return change


def _read_untracked(
    root: str, paths: list[str], max_file_lines: int, budget: int
) -> list[FileDiff]:
    """Blocking: each untracked path as an all-added diff, read without following links;
    past ``budget`` bytes read in all, the rest are ``too_large`` unread."""
    files: list[FileDiff] = []
    base = os.path.normpath(root)
    for rel in paths:
        full = os.path.normpath(os.path.join(base, rel))
        if not full.startswith(base + os.sep):
            continue
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if os.path.islink(full):
            data = os.readlink(full).encode()
        elif not os.path.isfile(full):
            continue
        elif st.st_size > min(MAX_UNTRACKED_BYTES, budget):
            files.append(FileDiff(path=rel, is_new=True, status="too_large"))
            continue
        else:
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as handle:
                    data = handle.read(MAX_UNTRACKED_BYTES + 1)
            except OSError:
                continue
        budget -= len(data)
        files.append(text_file_diff(rel, data, max_lines=max_file_lines))
    return files
