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
import contextlib
import logging
import os
import signal
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from paseo_hookspecs.records import (
    ManagedProcessDaemon,
    ManagedProcessOwner,
    ManagedProcessRecord,
    ProcessIdentity,
)

from paseo.agents.process import group_members, wait_group_gone

if TYPE_CHECKING:
    from paseo_hookspecs.store import ManagedProcessRepository

    from paseo.agents.process import AgentProcess

log = logging.getLogger("paseo.agents.tracker")

KIND = "agent"
"""``owner.kind`` of the records this tracker writes."""

REAP_TIMEOUT = 5.0
"""How long boot waits for a killed orphan group to disappear."""


def iso_now() -> str:
    """The current UTC time as TypeScript Paseo writes it (milliseconds, ``Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _start_ticks(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat`` (start time in clock ticks since boot)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def process_identity(pid: int) -> ProcessIdentity:
    """How to recognise process ``pid`` later (blocking; raises ``psutil.NoSuchProcess``)."""
    import psutil  # on first use: needed at boot only when a crash left processes behind

    process = psutil.Process(pid)
    with process.oneshot():
        try:
            command = " ".join(process.cmdline()) or None
        except (psutil.AccessDenied, psutil.ZombieProcess):
            # A zombie (an exited leader nobody reaped yet) still has its start time.
            command = None
        started = datetime.fromtimestamp(process.create_time(), UTC)
    return ProcessIdentity(
        commandLine=command,
        startedAt=started.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        startTimeTicks=_start_ticks(pid),
        bootId=_boot_id(),
    )


def same_process(pid: int, recorded: ProcessIdentity) -> bool:
    """Whether ``pid`` is still the process ``recorded`` describes (blocking)."""
    import psutil

    try:
        current = process_identity(pid)
    except psutil.NoSuchProcess:
        return False
    if recorded.startTimeTicks and recorded.bootId and current.startTimeTicks:
        return (current.startTimeTicks, current.bootId) == (
            recorded.startTimeTicks,
            recorded.bootId,
        )
    return (current.commandLine, current.startedAt) == (recorded.commandLine, recorded.startedAt)


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def reap_recorded_group(record: ManagedProcessRecord) -> str:
    """Kill what is left of a recorded process group (blocking); says what was done.

    A leader that is still the recorded process means the whole group is ours. A leader that
    is gone may have left group members behind (an npm launcher's native child): no new process
    can take a pid that is still a live group's id, so members with that group id are ours too.
    A pid now held by a different process means the old group is long gone.
    """
    import psutil

    pid = record.pid
    try:
        psutil.Process(pid)
        leader_exists = True
    except psutil.NoSuchProcess:
        leader_exists = False
    if leader_exists and not same_process(pid, record.identity):
        return "pid reused by another process; nothing to kill"
    members = group_members(pid)
    if not members:
        return "already gone"
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    wait_group_gone(pid, REAP_TIMEOUT)
    return f"killed orphaned process group {pid} ({len(members)} processes)"


def _daemon_alive(record: ManagedProcessRecord) -> bool:
    owner = record.daemon
    if owner is None or owner.pid == os.getpid() or not _alive(owner.pid):
        return False
    return same_process(owner.pid, owner.identity)


async def reconcile_orphans(repository: ManagedProcessRepository) -> list[str]:
    """Reap every agent process a previous daemon left behind and forget its record.

    Records of another live daemon (a shared home should never happen under the home lock,
    but the record says who owns it) are left alone. Returns one line per record handled.
    """
    report: list[str] = []
    for record in await repository.list():
        if record.owner.kind != KIND:
            continue
        if await asyncio.to_thread(_daemon_alive, record):
            continue
        outcome = await asyncio.to_thread(reap_recorded_group, record)
        log.warning(
            "agent process %s (pid %s, agent %s) left by a previous daemon: %s",
            record.id,
            record.pid,
            record.metadata.get("agentId"),
            outcome,
        )
        await repository.delete(record.id)
        report.append(f"{record.id}: {outcome}")
    return report


class ManagedProcessTracker:
    """The :class:`paseo.agents.process.ProcessTracker` of the agent service."""

    def __init__(self, repository: ManagedProcessRepository) -> None:
        self._repository = repository
        self._instance = uuid.uuid4().hex
        self._daemon: ManagedProcessDaemon | None = None
        self._live: dict[str, AgentProcess] = {}

    async def _daemon_block(self) -> ManagedProcessDaemon:
        if self._daemon is None:
            identity = await asyncio.to_thread(process_identity, os.getpid())
            self._daemon = ManagedProcessDaemon(
                instanceId=self._instance,
                pid=os.getpid(),
                identity=identity,
                bootId=identity.bootId,
                recordedAt=iso_now(),
            )
        return self._daemon

    async def started(self, process: AgentProcess) -> None:
        """Write the record before the provider talks to the process."""
        import psutil

        try:
            identity = await asyncio.to_thread(process_identity, process.pid)
        except psutil.NoSuchProcess:
            # It died at once: nothing can be orphaned, and the provider sees the exit.
            return
        record = ManagedProcessRecord(
            id=uuid.uuid4().hex,
            owner=ManagedProcessOwner(provider=process.provider, kind=KIND),
            pid=process.pid,
            command=process.argv[0],
            args=list(process.argv[1:]),
            metadata={"agentId": process.agent_id} if process.agent_id else {},
            identity=identity,
            daemon=await self._daemon_block(),
            createdAt=iso_now(),
        )
        await self._repository.put(record)
        process.record_id = record.id
        self._live[record.id] = process

    async def exited(self, process: AgentProcess) -> None:
        """The group is reaped: forget the record."""
        if process.record_id is None:
            return
        self._live.pop(process.record_id, None)
        await self._repository.delete(process.record_id)

    def live(self, agent_id: str | None = None) -> list[AgentProcess]:
        """Processes not yet reaped (of one agent, or all)."""
        return [p for p in self._live.values() if agent_id is None or p.agent_id == agent_id]

    async def terminate(self, agent_id: str | None = None) -> int:
        """Reap every live process of ``agent_id`` (or all): the safety net behind providers
        that lose track of a process (a start-up cancelled half-way, a close that failed)."""
        processes = self.live(agent_id)
        await asyncio.gather(*(p.terminate(grace=1.0) for p in processes), return_exceptions=True)
        return len(processes)
