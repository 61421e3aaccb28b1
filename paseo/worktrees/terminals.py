"""A worktree's ``worktree.terminals``: opened when the worktree is created (or trusted),
closed when it is archived.

The entries are read from the worktree's own ``paseo.json`` (the working copy just checked
out, the committed base's content). Each opens a terminal of the default profile in the
workspace's directory and types its command, as the TypeScript daemon does; an untrusted
worktree (a fork's) opens none. A terminal that cannot open (the daemon's terminal cap, a
malformed file) is logged and the rest still open: creating the worktree succeeded.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from typing import Protocol

from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.records import WorkspaceRecord

from paseo.worktrees.checkout import read_file
from paseo.worktrees.project_config import CONFIG_FILE, parse_project_config

log = logging.getLogger("paseo.worktrees")


class _Info(Protocol):
    @property
    def terminalId(self) -> str: ...


class Terminals(Protocol):
    """What this needs of the terminals room."""

    async def create(self, *, workspace_id: str | None = None, name: str | None = None) -> _Info:
        ...

    def input(self, terminal_id: str, data: bytes) -> None: ...

    def terminals(self, workspace_id: str | None = None) -> Sequence[_Info]: ...

    async def kill(self, terminal_id: str) -> object: ...


async def open_worktree_terminals(terminals: Terminals, workspace: WorkspaceRecord) -> list[str]:
    """Open ``workspace``'s ``worktree.terminals``; returns the terminal ids opened."""
    if workspace.untrustedSource is not None or not workspace.isPaseoOwnedWorktree:
        return []
    root = workspace.worktreeRoot or workspace.cwd
    path = os.path.join(root, CONFIG_FILE)
    try:
        config = parse_project_config(await asyncio.to_thread(read_file, path), path=path)
    except PaseoError as exc:
        log.warning("worktree terminals not opened: %s", exc.message)
        return []
    opened: list[str] = []
    for spec in config.terminals:
        try:
            # The entry's name is the terminal's title (until its program sets one), as the
            # TypeScript daemon shows it.
            info = await terminals.create(workspace_id=workspace.workspaceId, name=spec.name)
        except PaseoError as exc:
            log.warning("worktree terminal %r not opened: %s", spec.name, exc.message)
            continue
        terminals.input(info.terminalId, (spec.command + "\n").encode())
        opened.append(info.terminalId)
    return opened


async def close_terminals(terminals: Terminals, workspace_id: str) -> None:
    """Kill every terminal of ``workspace_id`` (before its checkout is removed)."""
    for info in terminals.terminals(workspace_id):
        try:
            await terminals.kill(info.terminalId)
        except PaseoError as exc:  # exited meanwhile
            log.debug("terminal %s: %s", info.terminalId, exc.message)
