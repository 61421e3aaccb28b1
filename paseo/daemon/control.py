"""Controlling a daemon from another process: start detached, stop, and inspect.

These functions never create the state root except :func:`start_detached`, which launches
``python -m paseo daemon start --foreground`` in a new session and waits for it to report ready.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from paseo.home import HomeLayout, read_pid_file
from paseo.home.meta import delete_local_credential, remove_pid_file

READY_PREFIX = "PASEO_READY "
"""The line a detached daemon writes to stderr once it accepts connections."""


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
    layout: HomeLayout, *, extra_args: list[str], env: dict[str, str], timeout: float = 30.0
) -> dict[str, Any]:
    """Start the daemon in the background; return its ready report (pid, listen, …)."""
    child_env = dict(env)
    child_env["PASEO_HOME"] = str(layout.root)
    child_env["PASEO_DETACHED"] = "1"
    process = subprocess.Popen(
        [sys.executable, "-m", "paseo", "daemon", "start", "--foreground", *extra_args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_env,
        start_new_session=True,  # its own process group: survives the terminal, killable as one
        close_fds=True,
    )
    assert process.stderr is not None
    output: list[str] = []
    deadline = time.monotonic() + timeout
    os.set_blocking(process.stderr.fileno(), False)
    buffer = b""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                process.kill()
                process.wait()
                raise StartFailed(
                    f"the daemon did not become ready within {timeout:.0f}s:\n" + "".join(output)
                )
            if not selector.select(min(remaining, 0.5)):
                if process.poll() is not None:
                    break
                continue
            chunk = process.stderr.read() or b""
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                if line.startswith(READY_PREFIX):
                    process.stderr.close()
                    report: dict[str, Any] = json.loads(line[len(READY_PREFIX) :])
                    return report
                output.append(line + "\n")
    code = process.wait()
    if buffer:
        output.append(buffer.decode("utf-8", "replace"))
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
