"""How a recorded process is recognised later, so a reused pid is never mistaken for it.

A record keeps the start time in clock ticks and the boot id (``/proc``), else the command line
and start time; :func:`same_process` compares a live pid against that.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from paseo_hookspecs.records import ProcessIdentity


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
