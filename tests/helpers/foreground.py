"""A real daemon run with ``paseo daemon start --foreground`` in a child process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.waiting import wait_for


def spawn_foreground(env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start the daemon (its own process group); the caller stops it."""
    return subprocess.Popen(
        [sys.executable, "-m", "paseo", "daemon", "start", "--foreground"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=None if env is None else {**os.environ, **env},
    )


def stop_foreground(process: subprocess.Popen[str]) -> None:
    """SIGTERM, then SIGKILL of the group if it does not exit within 20 s."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextmanager
def foreground_daemon(
    home: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """A running daemon on ``home`` (it has written its credential); stopped on exit."""
    process = spawn_foreground(env)
    try:
        wait_for(
            lambda: (home / "local-credential").exists() or process.poll() is not None,
            what="the daemon to write its credential",
        )
        assert process.poll() is None, process.communicate()
        yield process
    finally:
        stop_foreground(process)
