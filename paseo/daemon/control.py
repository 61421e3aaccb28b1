"""Controlling a daemon from another process: start detached, stop, and inspect.

These functions never create the state root except :func:`start_detached`, which launches
``python -m paseo daemon start --foreground`` in a new session and waits for it to report ready.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

from paseo.daemon.options import READY_PREFIX, DaemonOptions
from paseo.home import HomeLayout, read_pid_file
from paseo.home.meta import delete_local_credential, remove_pid_file


def lock_is_held(layout: HomeLayout) -> bool:
    """Whether a live daemon holds the home lock (read-only probe, creates nothing)."""
    # One implementation, kept in the client's light-weight discovery module so that
    # `paseo daemon status` can probe without importing the home package.
    from paseo.client.discovery import daemon_running

    return daemon_running(layout.root)


@dataclass(frozen=True)
class DaemonState:
    """What can be known about a daemon without talking to it."""

    running: bool
    pid: int | None
    info: dict[str, Any]


def local_state(layout: HomeLayout) -> DaemonState:
    info = read_pid_file(layout.pid) or {}
    running = lock_is_held(layout)
    pid = info.get("pid") if isinstance(info.get("pid"), int) else None
    return DaemonState(running=running, pid=pid if running else None, info=info)


class StartFailed(Exception):
    """The detached daemon exited or did not become ready; the message carries its output."""


def start_detached(
    layout: HomeLayout, *, env: dict[str, str], timeout: float = 30.0
) -> dict[str, Any]:
    """Start the daemon in the background; return its ready report (pid, listen, …).

    The daemon is a fork of this process that carries on in its own session (so it survives
    the terminal and its process group can be killed as one). Forking rather than starting a
    second interpreter skips the interpreter start-up and the CLI imports, the largest fixed
    part of start-to-ready. The child's stderr is a pipe to us until it reports ready, so a
    start-up failure (locked home, invalid config) is shown to the user; then it detaches.
    """
    from paseo.daemon.bootstrap import run_daemon

    child_env = dict(env, PASEO_HOME=str(layout.root), PASEO_DETACHED="1")
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the daemon
        code = 1
        try:
            os.close(read_fd)
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.dup2(write_fd, 2)
            os.close(devnull)
            os.close(write_fd)
            os.environ.clear()
            os.environ.update(child_env)
            code = run_daemon(DaemonOptions(home=layout.root, foreground=False, env=child_env))
        except Exception:  # noqa: BLE001 - any failure must reach the starter before we exit
            traceback.print_exc()  # fd 2 is the pipe to the starter
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        return _await_ready(pid, read_fd, timeout)
    finally:
        os.close(read_fd)


def _await_ready(pid: int, read_fd: int, timeout: float) -> dict[str, Any]:
    """Read the child's stderr until its READY line, its exit, or ``timeout``."""
    output: list[str] = []
    buffer = b""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            signal_daemon(pid, signal.SIGKILL, group=True)
            os.waitpid(pid, 0)
            raise StartFailed(
                f"the daemon did not become ready within {timeout:.0f}s:\n" + "".join(output)
            )
        readable, _, _ = select.select([read_fd], [], [], min(remaining, 0.5))
        if not readable:
            continue
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            if line.startswith(READY_PREFIX):
                report: dict[str, Any] = json.loads(line[len(READY_PREFIX) :])
                return report
            output.append(line + "\n")
    _, status = os.waitpid(pid, 0)
    if buffer:
        output.append(buffer.decode("utf-8", "replace"))
    code = os.waitstatus_to_exitcode(status)
    raise StartFailed("".join(output).strip() or f"the daemon exited with code {code}")


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Wait until ``pid`` is gone; ``True`` when it exited within ``timeout``."""
    import psutil

    try:
        psutil.Process(pid).wait(timeout=timeout)
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        return False
    return True


def signal_daemon(pid: int, sig: signal.Signals, *, group: bool = False) -> None:
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def clean_after_kill(layout: HomeLayout) -> None:
    """After a forced kill the dead daemon cannot clean up; do it, but only if the lock is free
    (i.e. no daemon owns the home any more)."""
    from paseo.home import HomeBusy, HomeLock

    lock = HomeLock(layout.lock, layout.pid)
    try:
        lock.acquire()
    except HomeBusy:
        return
    try:
        delete_local_credential(layout)
        remove_pid_file(layout)
    finally:
        lock.release(remove=True)
