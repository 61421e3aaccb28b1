"""Running a helper process (the verifier, pip) with a deadline; the whole group dies with it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from paseo_hookspecs.errors import Unavailable


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str


async def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    time_limit: float,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    inherit: Sequence[int] = (),
) -> Completed:
    """Run ``argv``; raise :class:`Unavailable` if it cannot start or outlives ``time_limit``
    seconds. ``inherit`` are file descriptors the child keeps open (the install lock: a child
    that outlives a killed installer keeps other installers out until it is done)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # Its own session, so a timeout (or our own death) can take its helpers down too.
            start_new_session=True,
            pass_fds=tuple(inherit),
        )
    except OSError as exc:
        raise Unavailable(f"cannot run {argv[0]}: {exc}") from exc
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(stdin), time_limit)
    except TimeoutError as exc:
        raise Unavailable(f"{' '.join(argv[:4])} did not finish within {time_limit:.0f}s") from exc
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
    return Completed(
        returncode=process.returncode if process.returncode is not None else -1,
        stdout=stdout.decode("utf-8", "replace"),
        stderr=stderr.decode("utf-8", "replace"),
    )
