"""``workspace.status``: a workspace's derived status announced when it changes.

A workspace is ``running`` while an agent's turn or a terminal's output runs in it
(:meth:`paseo.workspaces.service.Placement.running`), else ``idle``. Nothing stores that state:
:class:`RunningWork` holds what the rooms that cause it last said, and
:class:`WorkspaceActivity` hears them — an observer of the agent port (an agent's status is
part of its record) and the terminal service's activity callback, both given at construction,
so neither room holds a reference to this one. Each change asks :meth:`StatusWatch.recheck`. A
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
from paseo_hookspecs.records import AgentRecord

from paseo.projects.common import Publish

log = logging.getLogger("paseo.workspaces")

Status = Literal["running", "idle"]


class RunningWork:
    """The workspaces where work runs now: each counts only the work that carries its own
    ``workspaceId`` (a same-cwd sibling is untouched)."""

    def __init__(self) -> None:
        self._agents: dict[str, str] = {}
        """Running agent id -> its workspace id."""
        self._terminals: set[str] = set()

    def agent(self, record: AgentRecord, *, deleted: bool = False) -> None:
        """``record`` is an agent's newest state (or its last, ``deleted``)."""
        if not deleted and record.lastStatus == "running" and record.workspaceId:
            self._agents[record.id] = record.workspaceId
        else:
            self._agents.pop(record.id, None)

    def terminals(self, active: set[str]) -> None:
        """The workspaces with an active terminal are now ``active``."""
        self._terminals = set(active)

    def running(self) -> set[str]:
        return {*self._agents.values(), *self._terminals}


class StatusWatch:
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


class WorkspaceActivity(AgentObserver):
    """Hears the rooms that make workspaces run and keeps :class:`RunningWork` current.

    Subscribed with the internal agents too: an internal agent's turn runs in a workspace as
    well and always counted, but only a visible agent's record change asks for a recheck (what
    the workspace status announced before the agent port, whose subscribers see no internal
    agent by default)."""

    def __init__(self, work: RunningWork, watch: StatusWatch) -> None:
        self._work = work
        self._watch = watch

    async def on_record(self, change: RecordChange) -> None:
        record = change.record
        self._work.agent(record, deleted=change.kind == "deleted")
        if not record.internal:
            self._watch.recheck()

    def terminals(self, active: set[str]) -> None:
        """The terminal service's activity callback: called after each ``terminal.changed``
        with the workspaces that have an active terminal."""
        self._work.terminals(active)
        self._watch.recheck()
