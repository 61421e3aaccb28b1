"""Stashes: save (untracked files included), pop by index, list.

Stashes Paseo saves carry :data:`PASEO_PREFIX` in their message (the TypeScript daemon's
marker, so stashes either daemon made are recognised by both), which ``list`` can filter on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from paseo_hookspecs.errors import Conflict, NotFound

from paseo.git.checkout import READ_ENV, locate
from paseo.git.problems import MergeConflict, classify, conflict_message
from paseo.git.runner import GitCommandFailed, GitRunner

PASEO_PREFIX = "paseo-auto-stash:"


@dataclass(frozen=True)
class StashEntry:
    index: int
    message: str
    branch: str | None
    """The branch named in the stash (Paseo's label, else the branch it was made on)."""
    is_paseo: bool


def parse_stash_list(output: str) -> list[StashEntry]:
    """``git stash list -z --format=%gd%x00%gs``: selector and subject alternate, each ending
    in a NUL."""
    fields = output.split("\0")
    entries: list[StashEntry] = []
    for raw, subject in zip(fields[0::2], fields[1::2], strict=False):
        selector = raw.strip("\n")
        if not (selector.startswith("stash@{") and selector.endswith("}")):
            continue
        index = int(selector[len("stash@{") : -1])
        branch: str | None = None
        is_paseo = PASEO_PREFIX in subject
        if is_paseo:
            label = subject.split(PASEO_PREFIX, 1)[1].strip()
            branch = None if label in ("", "unnamed") else label
        elif subject.startswith(("On ", "WIP on ")):
            head = subject.removeprefix("WIP on ").removeprefix("On ")
            branch = head.split(":", 1)[0].strip() or None
        entries.append(StashEntry(index, subject, branch, is_paseo))
    return entries


async def save(runner: GitRunner, cwd: str, *, label: str | None = None) -> None:
    """Stash every change (untracked files included) under a Paseo message."""
    await asyncio.to_thread(locate, cwd)
    message = f"{PASEO_PREFIX} {label.strip() if label and label.strip() else 'unnamed'}"
    try:
        result = await runner.run(["stash", "push", "--include-untracked", "-m", message], cwd=cwd)
    except GitCommandFailed as exc:
        raise classify(exc, cwd=cwd) from None
    if "No local changes to save" in result.stdout:
        raise Conflict("nothing to stash: the checkout has no changes", data={"cwd": cwd})


async def pop(runner: GitRunner, cwd: str, index: int) -> None:
    """Apply stash ``index`` and drop it; a conflict keeps the stash and names the files."""
    entries = await list_stashes(runner, cwd, paseo_only=False)
    if not any(e.index == index for e in entries):
        raise NotFound(
            f"there is no stash {index} (`paseo git stash list` shows them)",
            data={"stashIndex": index},
        )
    try:
        await runner.run(["stash", "pop", f"stash@{{{index}}}"], cwd=cwd)
    except GitCommandFailed as exc:
        status = await runner.run(
            ["diff", "--name-only", "--diff-filter=U", "-z"], cwd=cwd, env=READ_ENV, check=False
        )
        files = [p for p in status.stdout.split("\0") if p]
        if files:
            raise MergeConflict(
                conflict_message(
                    f"applying stash {index}", files, cwd=cwd, abort="git reset --merge"
                ),
                data={"files": files, "cwd": cwd, "kept": f"stash@{{{index}}}"},
            ) from None
        raise classify(exc, cwd=cwd) from None


async def list_stashes(runner: GitRunner, cwd: str, *, paseo_only: bool = True) -> list[StashEntry]:
    await asyncio.to_thread(locate, cwd)
    result = await runner.run(["stash", "list", "-z", "--format=%gd%x00%gs"], cwd=cwd, env=READ_ENV)
    entries = parse_stash_list(result.stdout)
    return [e for e in entries if e.is_paseo] if paseo_only else entries
