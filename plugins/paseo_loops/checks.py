"""``--verify-check`` commands: a user's own shell command, run with ``sh -c`` in the loop's
cwd (running a person's command is the point), bounded in time, its process group killed and
reaped when it overruns or the loop stops."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from paseo_loops.records import now, tail

CHECK_TIMEOUT = 600.0
"""Seconds a check may run before it is killed and counted as failed."""


async def run_check(command: str, cwd: str, *, timeout: float = CHECK_TIMEOUT) -> dict[str, Any]:  # noqa: ASYNC109
    """Run one check; its result as the TypeScript daemon records it."""
    started = now()
    exit_code: int | None
    stdout = stderr = ""
    try:
        process = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # Its own process group, so a timeout or a stop kills what the command started too.
            start_new_session=True,
        )
    except OSError as exc:
        return _result(command, None, "", f"could not run the check: {exc}", started)
    try:
        async with asyncio.timeout(timeout):
            out, err = await process.communicate()
        exit_code = process.returncode
        stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    except TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        exit_code = None
        stderr = f"check timed out after {timeout:.0f}s"
    except asyncio.CancelledError:
        _kill_group(process.pid)
        await asyncio.shield(process.wait())
        raise
    return _result(command, exit_code, stdout, stderr, started)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _result(
    command: str, exit_code: int | None, stdout: str, stderr: str, started: str
) -> dict[str, Any]:
    return {
        "command": command,
        "exitCode": exit_code,
        "passed": exit_code == 0,
        "stdout": tail(stdout),
        "stderr": tail(stderr),
        "startedAt": started,
        "completedAt": now(),
    }
