"""Boot step: every agent gets a workspace, including those recorded before workspaces existed.

An agent record written by an older Paseo (or the TypeScript one before its workspace registry)
has a ``cwd`` and no ``workspaceId``. Every listing by workspace, the workspace's status and the
restore of an archived workspace follow ``workspaceId``, so such an agent was invisible to all of
them. At boot, before the agent service loads any record, each such live agent is stamped with
the workspace of its ``cwd`` (created with its project when missing, as for a new agent). An
agent whose directory is gone keeps no workspace, with a warning: placing it would create a
project for a directory that no longer exists. Tombstones (trashed agents) are left as they are.

Only another program (an older Paseo, the TypeScript one) writes records without a workspace,
and it may do so at any time between two starts of this daemon, so the pass runs on every boot.
It asks the store for just those records (``AgentFilter(without_workspace=True)``, answered from
the JSON driver's in-memory index or an indexed SQLite query): a home where every agent has a
workspace costs a walk of the index, no record read. (It used to page through every record, which
at 10,000 agents cost the start-up 0.3 s and 9 MiB, and so ran once per home behind a marker,
missing records an older program wrote later.) :data:`MARKER` still records the first pass.

Right after start a store may still be checking its index against the records (the JSON driver
at scale): the boot pass then answers from the index as it is (``list_now``), and when that was
partial the daemon runs the pass again once the store has settled (``WorkspaceService``).
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
    store: Store,
    home: Path,
    ensure: Callable[[str], Awaitable[WorkspaceRecord]],
    *,
    now: bool = False,
) -> bool:
    """:func:`assign_workspaces`; the first pass that placed any agent leaves :data:`MARKER`.
    Whether the pass saw every agent (with ``now``, answered at once, it may not have)."""
    stamped, complete = await assign_workspaces(store, ensure, now=now)
    marker = home / MARKER
    if stamped and not await asyncio.to_thread(marker.exists):
        await asyncio.to_thread(atomic_write_text, marker, f"{len(stamped)} agent(s) placed\n")
    return complete


_LEGACY = AgentFilter(include_archived=True, trashed=False, without_workspace=True)


async def assign_workspaces(
    store: Store, ensure: Callable[[str], Awaitable[WorkspaceRecord]], *, now: bool = False
) -> tuple[list[str], bool]:
    """Stamp each live agent without a ``workspaceId`` with ``ensure(cwd)``'s workspace;
    returns the agents stamped and whether every agent was seen (``now``: answered from the
    store's index as it is, which may be partial, rather than waiting for it)."""
    stamped: list[str] = []
    complete = True
    cursor: str | None = None
    listing = store.agents.list_now if now else store.agents.list
    while True:
        page = await listing(_LEGACY, cursor=cursor, limit=PAGE)
        complete = complete and not page.partial
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
    return stamped, complete
