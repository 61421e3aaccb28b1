"""Running ``git`` subprocesses: always through the limiter, bounded in time, in their own
process group so a timeout or a cancellation kills everything the command started."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paseo_hookspecs.errors import PaseoError

from paseo.git.limiter import GitProcessLimiter

DEFAULT_TIMEOUT = 60.0
"""Seconds a git command may run unless the caller says otherwise."""

KILL_WAIT = 5.0
"""Seconds to wait for a killed process group to be reaped."""


class GitCommandFailed(PaseoError):
    """A git command exited non-zero, timed out or could not start."""

    code = "git_failed"


@dataclass(frozen=True)
class GitResult:
    """What a finished git command left behind."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    truncated: bool = False
    """``stdout`` stopped at the caller's ``max_stdout`` (the process was killed there)."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0


# Git must never prompt (there is no terminal) and must answer in a stable language.
_BASE_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}


class GitRunner:
    """Starts git commands through one :class:`GitProcessLimiter`."""

    def __init__(self, limiter: GitProcessLimiter, *, git: str = "git") -> None:
        self.limiter = limiter
        self.git = git
        self.processes_started = 0
        """Git processes this runner started (benchmarks assert on it)."""

    async def run(
        self,
        args: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - a per-command bound is the API
        check: bool = True,
        stdin: bytes | None = None,
        max_stdout: int | None = None,
    ) -> GitResult:
        """Run ``git *args`` in ``cwd``; raise :class:`GitCommandFailed` when ``check`` and it
        fails (the message carries git's stderr). With ``max_stdout``, at most that many bytes
        of output are kept: past them the process is killed and the result is ``truncated``
        (never checked: its exit status is the kill's)."""
        if max_stdout is not None and stdin is not None:
            raise ValueError("max_stdout reads a command that takes no input")
        full_env = {**os.environ, **_BASE_ENV, **(env or {})}
        argv = (self.git, *args)
        async with self.limiter.slot():
            try:
                process = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=os.fspath(cwd),
                    env=full_env,
                    stdin=asyncio.subprocess.PIPE
                    if stdin is not None
                    else asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as exc:
                raise GitCommandFailed(f"cannot run git: {exc}", data={"args": list(args)}) from exc
            self.processes_started += 1
            truncated = False
            try:
                if max_stdout is None:
                    out, err = await asyncio.wait_for(process.communicate(stdin), timeout)
                else:
                    out, err, truncated = await asyncio.wait_for(
                        _read_bounded(process, max_stdout), timeout
                    )
            except TimeoutError:
                await _kill_group(process)
                raise GitCommandFailed(
                    f"git {' '.join(args)} timed out after {timeout:g}s", data={"args": list(args)}
                ) from None
            except BaseException:
                await asyncio.shield(_kill_group(process))
                raise
        result = GitResult(
            args=tuple(args),
            returncode=process.returncode if process.returncode is not None else -1,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            truncated=truncated,
        )
        if check and not result.ok and not truncated:
            detail = result.stderr.strip() or result.stdout.strip() or f"exit {result.returncode}"
            raise GitCommandFailed(
                f"git {' '.join(args)} failed: {detail}",
                data={"args": list(args), "exitCode": result.returncode, "stderr": result.stderr},
            )
        return result


async def _read_bounded(
    process: asyncio.subprocess.Process, limit: int
) -> tuple[bytes, bytes, bool]:
    """Read stdout up to ``limit`` bytes (killing the process past it) and all of stderr."""
    assert process.stdout is not None
    assert process.stderr is not None
    stderr_task = asyncio.ensure_future(process.stderr.read())
    chunks: list[bytes] = []
    size = 0
    truncated = False
    while True:
        chunk = await process.stdout.read(65536)
        if not chunk:
            break
        if size + len(chunk) > limit:
            chunks.append(chunk[: limit - size])
            truncated = True
            await _kill_group(process)
            break
        chunks.append(chunk)
        size += len(chunk)
    err = await stderr_task
    await process.wait()
    return b"".join(chunks), err, truncated


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """Kill the process group the command leads and reap the leader (bounded)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        await asyncio.wait_for(process.wait(), KILL_WAIT)
