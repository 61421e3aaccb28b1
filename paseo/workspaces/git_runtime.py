"""A workspace's live Git state for the sidebar: uncommitted changes, commits ahead of and
behind its base branch, and ahead of and behind ``origin`` (the TypeScript daemon's
``getCheckoutStatus``: ``isDirty``, ``aheadBehind``, ``aheadOfOrigin``, ``behindOfOrigin``),
``origin``'s URL, and the lines added and removed since the branch left its base (the
TypeScript daemon's ``getCheckoutShortstat``, the sidebar's ``+N -M``: ``git diff --shortstat``
of the working tree against the merge base with ``origin/<base>`` or ``<base>`` — on the base
branch itself, with ``origin/<branch>`` — ``null`` when there is no such ref or nothing
changed).

Read through the daemon's one Git runner (its limiter bounds how many run at once), with
``GIT_OPTIONAL_LOCKS=0`` so a read never takes the index lock a user's command needs. Each
workspace's answer is kept :data:`TTL` seconds and concurrent askers share one read, so a
sidebar refreshing on every agent event costs at most four Git processes per workspace per
:data:`TTL`. At most :data:`MAX_CACHED` answers are kept (the oldest dropped).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from paseo_hookspecs.records import WorkspaceRecord

from paseo.git.runner import GitRunner

TTL = 5.0
MAX_CACHED = 512
READ_ONLY = {"GIT_OPTIONAL_LOCKS": "0"}


@dataclass(frozen=True)
class GitRuntime:
    isDirty: bool | None
    aheadBehind: dict[str, int] | None
    aheadOfOrigin: int | None
    behindOfOrigin: int | None
    diffStat: dict[str, int] | None = None
    remoteUrl: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


NONE = GitRuntime(None, None, None, None)


class GitRuntimes:
    """See the module docstring; ``clock`` is monotonic."""

    def __init__(self, git: GitRunner, clock: Callable[[], float] = time.monotonic) -> None:
        self._git = git
        self._clock = clock
        self._kept: OrderedDict[str, tuple[float, asyncio.Task[GitRuntime]]] = OrderedDict()

    async def get(self, workspace: WorkspaceRecord) -> GitRuntime:
        if workspace.kind not in ("local_checkout", "worktree") or workspace.archivedAt:
            return NONE
        key = f"{workspace.workspaceId}\0{workspace.branch}\0{workspace.baseBranch}"
        now = self._clock()
        kept = self._kept.get(key)
        if kept is None or now - kept[0] > TTL or (kept[1].done() and kept[1].cancelled()):
            task = asyncio.get_running_loop().create_task(self._read(workspace))
            self._kept[key] = (now, task)
            self._kept.move_to_end(key)
            while len(self._kept) > MAX_CACHED:
                self._kept.popitem(last=False)
            kept = self._kept[key]
        return await asyncio.shield(kept[1])

    async def _count(self, cwd: str, *args: str) -> str | None:
        result = await self._git.run(args, cwd=cwd, env=READ_ONLY, check=False, timeout=30)
        return result.stdout.strip() if result.returncode == 0 else None

    async def _read(self, workspace: WorkspaceRecord) -> GitRuntime:
        cwd = workspace.cwd
        status = await self._count(cwd, "status", "--porcelain", "--untracked-files=normal")
        dirty = None if status is None else bool(status)
        branch = workspace.branch
        base = workspace.baseBranch
        ahead_behind = None
        if branch and base and base != branch:
            counts = await self._count(
                cwd, "rev-list", "--left-right", "--count", f"{base}...{branch}"
            )
            parts = (counts or "").split()
            if len(parts) == 2 and all(p.isdigit() for p in parts):
                ahead_behind = {"ahead": int(parts[1]), "behind": int(parts[0])}
        ahead = behind = None
        if branch and await self._count(cwd, "rev-parse", "--verify", "-q", f"origin/{branch}"):
            found = await self._count(cwd, "rev-list", "--count", f"origin/{branch}..{branch}")
            ahead = int(found) if found and found.isdigit() else None
            found = await self._count(cwd, "rev-list", "--count", f"{branch}..origin/{branch}")
            behind = int(found) if found and found.isdigit() else None
        remote = await self._count(cwd, "config", "--get", "remote.origin.url")
        return GitRuntime(
            dirty, ahead_behind, ahead, behind, await self._diff_stat(cwd, branch, base), remote
        )

    async def _has_ref(self, cwd: str, ref: str) -> bool:
        return await self._count(cwd, "rev-parse", "--verify", "-q", ref) is not None

    async def _diff_stat(
        self, cwd: str, branch: str | None, base: str | None
    ) -> dict[str, int] | None:
        """``getCheckoutShortstat``'s comparison: origin's base when it has one (what a pull
        request would be measured against), else the local base; on the base branch, what is
        not yet on ``origin``."""
        compare: str | None = None
        if branch and base and base != branch:
            name = base.removeprefix("refs/remotes/").removeprefix("origin/")
            for ref in (f"origin/{name}", name):
                if await self._has_ref(cwd, ref):
                    compare = ref
                    break
        elif branch and await self._has_ref(cwd, f"origin/{branch}"):
            compare = f"origin/{branch}"
        if compare is None:
            return None
        merge_base = await self._count(cwd, "merge-base", "HEAD", compare)
        if not merge_base:
            return None
        stat = await self._count(cwd, "diff", "--shortstat", merge_base)
        return parse_shortstat(stat or "")


def parse_shortstat(text: str) -> dict[str, int] | None:
    """``N files changed, A insertions(+), D deletions(-)`` → ``{additions, deletions}``;
    ``None`` for no change (the TypeScript daemon's ``parseCheckoutShortstat``)."""
    added = re.search(r"(\d+) insertion", text)
    removed = re.search(r"(\d+) deletion", text)
    additions = int(added[1]) if added else 0
    deletions = int(removed[1]) if removed else 0
    if additions == 0 and deletions == 0:
        return None
    return {"additions": additions, "deletions": deletions}
