"""Durable records of live agent processes, and the boot-time reaping of orphans they enable.

While the daemon runs, :class:`ManagedProcessTracker` (the tracker of the agent service's
:class:`paseo.agents.process.AgentProcessLauncher`) writes a ``ManagedProcessRecord`` for every
agent program before the provider talks to it and deletes it once the process group is reaped.
A daemon that crashed leaves its records behind; :func:`reconcile_orphans` runs at the next boot
and kills each recorded process group whose leader is still the process that was recorded
(same start time and boot, or same command line and start time where ``/proc`` is missing), so
a reused pid is never killed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from paseo.processes import (
    ProcessRecords,
    iso_now,
    reap_orphans,
    reap_recorded_group,
)

if TYPE_CHECKING:
    from paseo_hookspecs.store import ManagedProcessRepository

    from paseo.agents.process import AgentProcess

KIND = "agent"
"""``owner.kind`` of the records this tracker writes."""

async def reconcile_orphans(repository: ManagedProcessRepository) -> list[str]:
    """Reap every agent process group a previous daemon left behind and forget its record."""
    return await reap_orphans(repository, KIND, reap_recorded_group)


class ManagedProcessTracker:
    """The :class:`paseo.agents.process.ProcessTracker` of the agent service."""

    def __init__(self, repository: ManagedProcessRepository) -> None:
        self._records = ProcessRecords(repository, kind=KIND)
        self._live: dict[str, AgentProcess] = {}

    async def started(self, process: AgentProcess) -> None:
        """Write the record before the provider talks to the process (a process that died at
        once gets none: nothing can be orphaned, and the provider sees the exit)."""
        record_id = await self._records.record(
            process.pid,
            process.argv,
            {"agentId": process.agent_id} if process.agent_id else {},
            provider=process.provider,
        )
        if record_id is not None:
            process.record_id = record_id
            self._live[record_id] = process

    async def exited(self, process: AgentProcess) -> None:
        """The group is reaped: forget the record."""
        if process.record_id is None:
            return
        self._live.pop(process.record_id, None)
        await self._records.forget(process.record_id)

    def live(self, agent_id: str | None = None) -> list[AgentProcess]:
        """Processes not yet reaped (of one agent, or all)."""
        return [p for p in self._live.values() if agent_id is None or p.agent_id == agent_id]

    async def terminate(self, agent_id: str | None = None) -> int:
        """Reap every live process of ``agent_id`` (or all): the safety net behind providers
        that lose track of a process (a start-up cancelled half-way, a close that failed)."""
        processes = self.live(agent_id)
        await asyncio.gather(*(p.terminate(grace=1.0) for p in processes), return_exceptions=True)
        return len(processes)


__all__ = ["KIND", "ManagedProcessTracker", "iso_now", "reconcile_orphans"]
