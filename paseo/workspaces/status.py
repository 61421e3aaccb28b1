"""``workspace.status``: a workspace's derived status announced when it changes.

A workspace is ``running`` while an agent's turn or a terminal's output runs in it
(:meth:`paseo.workspaces.service.Placement.running`), else ``idle``. Nothing stores that state:
the rooms that cause it call :meth:`StatusWatch.recheck` when their own state changes (the
composition root wires the agent service's record changes and the terminals' activity). A
recheck only schedules a pass on the loop, so a burst of agent events costs one pass, and a pass
publishes one notification per workspace whose status differs from the last one published, not
one per event.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Literal

from paseo_hookspecs.agents import AgentObserver, RecordChange

from paseo.workspaces.common import Publish

log = logging.getLogger("paseo.workspaces")

Status = Literal["running", "idle"]


class StatusWatch(AgentObserver):
    """See the module docstring. ``running()`` answers the ids of the running workspaces."""

    def __init__(self, running: Callable[[], set[str]], publish: Publish) -> None:
        self._running = running
        self._publish = publish
        self._published: set[str] = set()
        self._scheduled: asyncio.Handle | None = None

    def recheck(self) -> None:
        """Compare the status of every workspace with the last announced one, soon (once for
        every call made before the pass runs)."""
        if self._scheduled is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: nothing is served, so nobody can be told
        self._scheduled = loop.call_soon(self._pass)

    def _pass(self) -> None:
        self._scheduled = None
        try:
            now = self._running()
        except Exception:  # a room's bug must not stop the announcements of the others
            log.exception("cannot derive the running workspaces")
            return
        for workspace_id in sorted(now ^ self._published):
            status: Status = "running" if workspace_id in now else "idle"
            self._publish("workspace.status", {"workspaceId": workspace_id, "status": status})
        self._published = now

    def stop(self) -> None:
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None

    # An observer of the agent port's events: an agent's status is part of its record, so
    # record changes are what can change a bucket.

    async def on_record(self, change: RecordChange) -> None:
        self.recheck()
