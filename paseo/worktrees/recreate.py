"""Recreating an archived workspace's deleted Paseo-owned checkout (restore's step): the
branch if it still exists, else a new one from its remote-tracking copy or the base; the cwd's
relative path inside the checkout; setup from the committed ``paseo.json``. A failure removes
what it made (the checkout, a branch it created)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable

from paseo_hookspecs.errors import Conflict
from paseo_hookspecs.records import WorkspaceRecord

from paseo.git.facts import HEADS, read_blob_at, read_facts, ref_oid, resolve_commitish
from paseo.git.runner import GitRunner
from paseo.worktrees.checkout import make_parent, raise_setup_failure
from paseo.worktrees.lifecycle import ProgressCallback, run_commands
from paseo.worktrees.project_config import CONFIG_FILE, parse_project_config


async def recreate_checkout(
    git: GitRunner,
    workspace: WorkspaceRecord,
    root: str,
    *,
    run_setup: bool,
    env: Callable[[str, str, str | None, int | None], dict[str, str]],
    progress: Callable[[str, str], ProgressCallback],
    remove_checkout: Callable[[str, str], Awaitable[None]],
    delete_branch: Callable[[str, str, str], Awaitable[bool]],
) -> None:
    """Recreate ``workspace``'s checkout at ``root`` (see the module docstring)."""
    main = workspace.mainRepoRoot
    if main is None or await asyncio.to_thread(read_facts, main) is None:
        raise Conflict(
            f"cannot recreate {root}: its main repository {main} is gone",
            data={"mainRepoRoot": main},
        )
    await git.run(["worktree", "prune"], cwd=main, check=False)
    branch = workspace.branch
    created = False
    start: str | None = None
    if branch and await asyncio.to_thread(ref_oid, main, HEADS + branch):
        args = [root, branch]
    else:
        candidates = [f"refs/remotes/origin/{branch}"] if branch else []
        if workspace.baseBranch:
            candidates.append(workspace.baseBranch)
        resolved = None
        for candidate in candidates:
            resolved = await asyncio.to_thread(resolve_commitish, main, candidate)
            if resolved is not None:
                break
        if resolved is None:
            raise Conflict(
                f"cannot recreate {root}: neither its branch nor its base exists",
                data={"branch": branch, "baseBranch": workspace.baseBranch},
            )
        start = resolved[1]
        if branch:
            args = ["--no-track", "-b", branch, root, start]
            created = True
        else:
            args = ["--detach", root, start]
    await asyncio.to_thread(make_parent, root)
    await git.run(["worktree", "add", *args], cwd=main, timeout=300)
    try:
        cwd = workspace.cwd
        # The relative path from the backing root to cwd is part of the placement; a
        # directory the checkout does not track is recreated empty.
        await asyncio.to_thread(os.makedirs, cwd, exist_ok=True)
        if run_setup:
            head = await asyncio.to_thread(ref_oid, root, "HEAD")
            config = parse_project_config(
                await asyncio.to_thread(read_blob_at, root, head, CONFIG_FILE) if head else None
            )
            if config.setup:
                results = await run_commands(
                    config.setup,
                    cwd=cwd,
                    env=env(main, root, branch, None),
                    on_event=progress(workspace.workspaceId, "setup"),
                )
                raise_setup_failure(results, workspace.workspaceId)
    except BaseException:
        await asyncio.shield(remove_checkout(main, root))
        if created and branch and start:
            await asyncio.shield(delete_branch(main, branch, start))
        raise
