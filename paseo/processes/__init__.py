"""Durable records of session-leading helper processes, and reaping what a crash left behind.

A service that starts a process in a session of its own (terminals do, so a shell's job-control
groups stay reachable) writes a ``ManagedProcessRecord`` while it lives with
:class:`ProcessRecords` and deletes it once the session is reaped. A daemon that crashed leaves
its records behind; :func:`reap_orphans` runs at the next boot and kills each recorded session
whose leader is still the recorded process (same start time and boot, or same command line and
start time where ``/proc`` is missing). A pid that is still a live session's id cannot be handed
to a new process, so surviving members of a session whose leader is gone are ours too.

The agent room keeps its own process-group variant of this (``paseo.agents.tracker``); the two
share the record model and the identity rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paseo_hookspecs.records import (
    ManagedProcessDaemon,
    ManagedProcessOwner,
    ManagedProcessRecord,
    ProcessIdentity,
)
from paseo_hookspecs.store import ManagedProcessRepository

log = logging.getLogger("paseo.processes")

REAP_TIMEOUT = 5.0
"""How long reaping waits for a killed session's members to disappear."""


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
    import psutil

    process = psutil.Process(pid)
    with process.oneshot():
        try:
            command = " ".join(process.cmdline()) or None
        except (psutil.AccessDenied, psutil.ZombieProcess):
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


def session_members(sid: int, *, live_only: bool = False) -> list[int]:
    """Pids in session ``sid``; ``live_only`` leaves out zombies. Blocking (reads /proc)."""
    import psutil

    members = []
    for process in psutil.process_iter():
        with contextlib.suppress(ProcessLookupError, PermissionError, psutil.Error):
            if os.getsid(process.pid) == sid and not (
                live_only and process.status() == psutil.STATUS_ZOMBIE
            ):
                members.append(process.pid)
    return members


def kill_session(sid: int, timeout: float = REAP_TIMEOUT) -> int:
    """SIGKILL every process of session ``sid`` and wait (bounded) until none is alive.

    Job-control shells give each job its own process group inside the session, so the
    session, not one group, is what a terminal owns. Blocking; returns how many were killed.
    """
    killed = 0
    deadline = time.monotonic() + timeout
    while True:
        members = session_members(sid, live_only=True)
        if not members or time.monotonic() >= deadline:
            return killed
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.02)


def reap_recorded_session(record: ManagedProcessRecord) -> str:
    """Kill what is left of a recorded session (blocking); says what was done."""
    import psutil

    pid = record.pid
    try:
        psutil.Process(pid)
        leader_exists = True
    except psutil.NoSuchProcess:
        leader_exists = False
    if leader_exists and not same_process(pid, record.identity):
        return "pid reused by another process; nothing to kill"
    if not session_members(pid, live_only=True):
        return "already gone"
    killed = kill_session(pid)
    return f"killed orphaned session {pid} ({killed} processes)"


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _daemon_alive(record: ManagedProcessRecord) -> bool:
    owner = record.daemon
    if owner is None or owner.pid == os.getpid() or not _alive(owner.pid):
        return False
    return same_process(owner.pid, owner.identity)


async def reap_orphans(repository: ManagedProcessRepository, kind: str) -> list[str]:
    """Reap every ``kind`` session a previous daemon left behind and forget its record.

    Records of another live daemon are left alone. Returns one line per record handled.
    """
    report: list[str] = []
    for record in await repository.list():
        if record.owner.kind != kind:
            continue
        if await asyncio.to_thread(_daemon_alive, record):
            continue
        outcome = await asyncio.to_thread(reap_recorded_session, record)
        log.warning(
            "%s process %s (pid %s) left by a previous daemon: %s",
            kind,
            record.id,
            record.pid,
            outcome,
        )
        await repository.delete(record.id)
        report.append(f"{record.id}: {outcome}")
    return report


class ProcessRecords:
    """Writes and deletes the records of one kind of live process (see the module docstring)."""

    def __init__(self, repository: ManagedProcessRepository, *, kind: str, provider: str) -> None:
        self._repository = repository
        self._owner = ManagedProcessOwner(provider=provider, kind=kind)
        self._instance = uuid.uuid4().hex
        self._daemon: ManagedProcessDaemon | None = None

    @property
    def kind(self) -> str:
        return self._owner.kind

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

    async def record(
        self, pid: int, argv: Sequence[str], metadata: dict[str, Any]
    ) -> str | None:
        """Durably record live process ``pid``; its record id, or ``None`` when it already
        exited (nothing can be orphaned then)."""
        import psutil

        try:
            identity = await asyncio.to_thread(process_identity, pid)
        except psutil.NoSuchProcess:
            return None
        record = ManagedProcessRecord(
            id=uuid.uuid4().hex,
            owner=self._owner,
            pid=pid,
            command=argv[0],
            args=list(argv[1:]),
            metadata=metadata,
            identity=identity,
            daemon=await self._daemon_block(),
            createdAt=iso_now(),
        )
        await self._repository.put(record)
        return record.id

    async def forget(self, record_id: str) -> None:
        """The process and its session are reaped: delete the record."""
        await self._repository.delete(record_id)


__all__ = [
    "ProcessRecords",
    "iso_now",
    "kill_session",
    "process_identity",
    "reap_orphans",
    "reap_recorded_session",
    "same_process",
    "session_members",
]
