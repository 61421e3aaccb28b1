"""Running ``paseo.json`` setup and teardown commands.

Each command runs through ``/bin/sh -c`` in its own process group with the worktree's
``PASEO_*`` environment; its output streams to a progress callback as it arrives and is kept
(bounded, the tail wins) for the result. Commands run in order and stop at the first failure.
A command that outlives its timeout, or whose caller is cancelled, has its whole group killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from paseo_hookspecs.errors import PaseoError

COMMAND_TIMEOUT = 15 * 60.0
"""Seconds one lifecycle command may run."""

MAX_CAPTURE = 64 * 1024
"""Characters of each stream kept in a result (the tail)."""

ProgressCallback = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class CommandResult:
    """One finished lifecycle command."""

    command: str
    cwd: str
    exitCode: int | None
    stdout: str
    stderr: str
    durationMs: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class LifecycleFailed(PaseoError):
    """A setup or teardown command failed; ``data["results"]`` holds every command's output."""

    code = "worktree_lifecycle_failed"


class WorktreeSetupFailed(LifecycleFailed):
    code = "worktree_setup_failed"


class WorktreeTeardownFailed(LifecycleFailed):
    code = "worktree_teardown_failed"


def failure_message(phase: str, results: Sequence[CommandResult]) -> str:
    last = results[-1]
    output = (last.stderr.strip() or last.stdout.strip())[-2000:]
    status = f"exit {last.exitCode}" if last.exitCode is not None else "killed"
    return f"worktree {phase} command failed ({status}): {last.command}" + (
        f"\n{output}" if output else ""
    )


async def _pump(
    stream: asyncio.StreamReader | None,
    name: str,
    sink: list[str],
    emit: Callable[[str, str], None],
) -> None:
    if stream is None:
        return
    while chunk := await stream.read(4096):
        text = chunk.decode("utf-8", "replace")
        sink.append(text)
        emit(name, text)


def _tail(parts: list[str]) -> str:
    return "".join(parts)[-MAX_CAPTURE:]


async def run_commands(
    commands: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    on_event: ProgressCallback | None = None,
    timeout: float = COMMAND_TIMEOUT,  # noqa: ASYNC109 - a per-command bound is the API
) -> list[CommandResult]:
    """Run ``commands`` in order until one fails; return the results of those that ran."""
    results: list[CommandResult] = []
    full_env = {**os.environ, **env}
    total = len(commands)

    def send(event: dict[str, Any]) -> None:
        if on_event is not None:
            on_event(event)

    for index, command in enumerate(commands, start=1):
        base = {"index": index, "total": total, "command": command, "cwd": cwd}
        send({"type": "command_started", **base})
        started = time.monotonic()
        out: list[str] = []
        err: list[str] = []
        exit_code: int | None
        try:
            process = await asyncio.create_subprocess_exec(
                "/bin/sh",
                "-c",
                command,
                cwd=cwd,
                env=full_env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            err.append(str(exc))
            exit_code = None
        else:

            def emit(stream: str, chunk: str, base: dict[str, Any] = base) -> None:
                send({"type": "output", **base, "stream": stream, "chunk": chunk})

            try:
                await asyncio.wait_for(
                    asyncio.gather(
                        _pump(process.stdout, "stdout", out, emit),
                        _pump(process.stderr, "stderr", err, emit),
                        process.wait(),
                    ),
                    timeout,
                )
                exit_code = process.returncode
            except TimeoutError:
                err.append(f"\n[paseo] killed after {timeout:g}s\n")
                await _kill(process)
                exit_code = None
            except BaseException:
                await asyncio.shield(_kill(process))
                raise
        result = CommandResult(
            command=command,
            cwd=cwd,
            exitCode=exit_code,
            stdout=_tail(out),
            stderr=_tail(err),
            durationMs=int((time.monotonic() - started) * 1000),
        )
        results.append(result)
        send(
            {
                "type": "command_completed",
                **base,
                "exitCode": exit_code,
                "durationMs": result.durationMs,
            }
        )
        if exit_code != 0:
            break
    return results


def succeeded(results: Sequence[CommandResult]) -> bool:
    """Whether every command that ran exited 0 (an empty run succeeds)."""
    return all(result.exitCode == 0 for result in results)


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), 5.0)
