"""Reaping what a crashed daemon left behind, from its ``ManagedProcessRecord`` s.

A record names the leader of a process group (agent programs) or of a session (terminals: a
shell's job-control groups all live in its session). At boot :func:`reap_orphans` kills what is
left of each recorded unit whose leader is still the recorded process, or whose leader is gone
(a pid that is still a live group's or session's id cannot be handed to a new process, so
surviving members are ours too), and forgets the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable

from paseo_hookspecs.records import ManagedProcessRecord
from paseo_hookspecs.store import ManagedProcessRepository

from paseo.processes.identity import same_process

log = logging.getLogger("paseo.processes")

REAP_TIMEOUT = 5.0
"""How long reaping waits for a killed group's or session's members to disappear."""

Reaper = Callable[[ManagedProcessRecord], str]
"""Kills what is left of one record's unit (blocking) and says what was done."""


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


def group_members(pgid: int, *, live_only: bool = False) -> list[int]:
    """Pids in process group ``pgid``; ``live_only`` leaves out zombies (in a container without
    an init that reaps orphans, a dead group's zombies linger). Blocking (reads /proc)."""
    import psutil

    members = []
    for process in psutil.process_iter():
        with contextlib.suppress(ProcessLookupError, PermissionError, psutil.Error):
            if os.getpgid(process.pid) == pgid and not (
                live_only and process.status() == psutil.STATUS_ZOMBIE
            ):
                members.append(process.pid)
    return members


def wait_group_gone(pgid: int, timeout: float) -> bool:
    """Wait until no live process is left in group ``pgid`` (a SIGKILL is not instant for a
    process mid-syscall); ``False`` after ``timeout`` seconds. Blocking."""
    deadline = time.monotonic() + timeout
    while group_members(pgid, live_only=True):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _leader_reused(record: ManagedProcessRecord) -> bool:
    import psutil

    try:
        psutil.Process(record.pid)
    except psutil.NoSuchProcess:
        return False
    return not same_process(record.pid, record.identity)


def reap_recorded_group(record: ManagedProcessRecord) -> str:
    """:data:`Reaper` for a process group led by the recorded pid."""
    if _leader_reused(record):
        return "pid reused by another process; nothing to kill"
    members = group_members(record.pid)
    if not members:
        return "already gone"
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(record.pid, signal.SIGKILL)
    wait_group_gone(record.pid, REAP_TIMEOUT)
    return f"killed orphaned process group {record.pid} ({len(members)} processes)"


def reap_recorded_session(record: ManagedProcessRecord) -> str:
    """:data:`Reaper` for a session led by the recorded pid."""
    if _leader_reused(record):
        return "pid reused by another process; nothing to kill"
    if not session_members(record.pid, live_only=True):
        return "already gone"
    killed = kill_session(record.pid)
    return f"killed orphaned session {record.pid} ({killed} processes)"


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


async def reap_orphans(
    repository: ManagedProcessRepository, kind: str, reap: Reaper
) -> list[str]:
    """Reap every ``kind`` record a previous daemon left behind with ``reap`` and forget it.

    Records of another live daemon are left alone. Returns one line per record handled.
    """
    report: list[str] = []
    for record in await repository.list():
        if record.owner.kind != kind:
            continue
        if await asyncio.to_thread(_daemon_alive, record):
            continue
        outcome = await asyncio.to_thread(reap, record)
        log.warning(
            "%s process %s (pid %s%s) left by a previous daemon: %s",
            kind,
            record.id,
            record.pid,
            f", agent {record.metadata['agentId']}" if record.metadata.get("agentId") else "",
            outcome,
        )
        await repository.delete(record.id)
        report.append(f"{record.id}: {outcome}")
    return report
