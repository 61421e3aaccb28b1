"""Boot step: every agent gets a workspace, including those recorded before workspaces existed.

An agent record written by an older Paseo (or the TypeScript one before its workspace registry)
has a ``cwd`` and no ``workspaceId``. Every listing by workspace, the workspace's status and the
restore of an archived workspace follow ``workspaceId``, so such an agent was invisible to all of
them. At boot, before the agent service loads any record, each such live agent is stamped with
the workspace of its ``cwd`` (created with its project when missing, as for a new agent). An
agent whose directory is gone keeps no workspace, with a warning: placing it would create a
project for a directory that no longer exists. Tombstones (trashed agents) are left as they are.

The pass reads every agent record, so it runs once per home: :data:`MARKER` records that it
ran (a home without agents needs neither the pass nor the marker). Only another program (an
older Paseo) writes records without a workspace; this daemon stamps every agent it creates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from paseo_hookspecs.errors import Conflict, NotFound, PaseoError
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import WorkspaceRecord
from paseo_hookspecs.store import AgentFilter

from paseo.fs import atomic_write_text
from paseo.projects.common import PAGE

MARKER = Path("legacy-agents-placed")
"""Under the home: written once every legacy agent record was given a workspace."""

log = logging.getLogger("paseo.workspaces")


async def assign_workspaces_once(
    store: Store, home: Path, ensure: Callable[[str], Awaitable[WorkspaceRecord]]
) -> list[str]:
    """:func:`assign_workspaces`, unless this home's pass already ran (or it has no agents)."""
    marker = home / MARKER
    if await asyncio.to_thread(marker.exists):
        return []
    if await store.agents.count(_EVERY_LIVE) == 0:
        return []
    stamped = await assign_workspaces(store, ensure)
    await asyncio.to_thread(atomic_write_text, marker, f"{len(stamped)} agent(s) placed\n")
    return stamped


_EVERY_LIVE = AgentFilter(include_archived=True, trashed=False)


async def assign_workspaces(
    store: Store, ensure: Callable[[str], Awaitable[WorkspaceRecord]]
) -> list[str]:
    """Stamp each live agent without a ``workspaceId`` with ``ensure(cwd)``'s workspace;
    returns the agents stamped."""
    stamped: list[str] = []
    cursor: str | None = None
    every_live = _EVERY_LIVE
    while True:
        page = await store.agents.list(every_live, cursor=cursor, limit=PAGE)
        for record in page.items:
            if record.workspaceId:
                continue
            try:
                workspace = await ensure(record.cwd)
            except PaseoError as exc:
                log.warning(
                    "agent %s has no workspace and its cwd %s cannot get one: %s",
                    record.id,
                    record.cwd,
                    exc.message,
                )
                continue
            try:
                await store.agents.update(
                    record.id,
                    {"workspaceId": workspace.workspaceId},
                    expect={"workspaceId": None},
                )
            except (Conflict, NotFound):
                continue  # changed meanwhile: it is no longer the legacy record read
            stamped.append(record.id)
        cursor = page.next_cursor
        if cursor is None:
            break
    if stamped:
        log.info("gave %d agent(s) recorded without a workspace the one of their cwd", len(stamped))
    return stamped
