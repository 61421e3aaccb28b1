"""Running a package manager as a child process, with a deadline and a readable failure."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from paseo_hookspecs.errors import PaseoError, Unavailable

DEFAULT_TIMEOUT = 600.0
"""Seconds a fetch may take; registry downloads can be slow, but never unbounded."""

_TAIL = 2000


class CommandFailed(PaseoError):
    """A package manager exited with an error; ``message`` ends with its stderr tail."""

    code = "plugin_source_failed"


def _kill_group(process: asyncio.subprocess.Process) -> None:
    # The child runs in its own session, so its helpers (npm spawns node, pip spawns builds)
    # die with it instead of writing into a directory the caller is about to remove.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    time_limit: float = DEFAULT_TIMEOUT,
) -> str:
    """Run ``argv`` in ``cwd``; return its stdout. Raise :class:`CommandFailed` on a non-zero
    exit and :class:`Unavailable` when the program is missing or the deadline passes."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise Unavailable(f"{argv[0]} is not installed") from exc
    name = " ".join([Path(argv[0]).name, *argv[1:3]])
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), time_limit)
    except TimeoutError as exc:
        raise Unavailable(f"{name} did not finish within {time_limit:.0f}s") from exc
    finally:
        if process.returncode is None:
            _kill_group(process)
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
    if process.returncode != 0:
        tail = stderr.decode("utf-8", "replace").strip()[-_TAIL:]
        raise CommandFailed(f"{name} failed (exit {process.returncode}): {tail}")
    return stdout.decode("utf-8", "replace")
