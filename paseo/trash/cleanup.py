"""Removing what a purged agent leaves outside the store: its Paseo-owned run directory.

The only root a cleanup item may name is ``agent-runs/<agentId>`` under ``$PASEO_HOME`` (the
per-agent sidecar state Paseo owns). Anything else — a user's project, an agent's cwd, a
worktree, a provider's own home — is refused before a file is touched, and a symlink at the
root is removed as a link, never followed.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path, PurePosixPath

from paseo_hookspecs.records import CleanupItem

RUNS_DIR = "agent-runs"
"""``$PASEO_HOME/agent-runs/<agentId>/``: per-agent state Paseo owns, removed after a purge."""


class CleanupRefused(ValueError):
    """A cleanup item names a path outside the roots a purge may remove."""


def roots_of(agent_id: str) -> list[str]:
    """The home-relative roots a purge of ``agent_id`` queues for removal."""
    return [f"{RUNS_DIR}/{agent_id}"]


def _checked(home: Path, item: CleanupItem, root: str) -> Path:
    """``root`` as a path under ``home``, if it is exactly this agent's run directory."""
    relative = PurePosixPath(root)
    if relative.is_absolute() or relative.parts != (RUNS_DIR, item.agentId) or (
        item.agentId in {"", ".", ".."} or "/" in item.agentId or "\\" in item.agentId
    ):
        raise CleanupRefused(
            f"cleanup item {item.id} names {root!r}: only {RUNS_DIR}/<agentId> of the purged "
            "agent may be removed"
        )
    return home / RUNS_DIR / item.agentId


def remove_roots(home: Path, item: CleanupItem) -> None:
    """Remove every root of ``item`` (blocking). Idempotent: a root already gone is done.
    Raises ``CleanupRefused`` or ``OSError``; then nothing outside the roots was touched."""
    paths = [_checked(home, item, root) for root in item.roots]
    runs = home / RUNS_DIR
    if paths and runs.is_symlink():
        raise CleanupRefused(f"{runs} is a symlink: Paseo removes nothing through it")
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(mode):
            # rmtree never follows symlinks inside the tree: a link to a project goes, the
            # project stays.
            shutil.rmtree(path)
        else:
            os.unlink(path)
