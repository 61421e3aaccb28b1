"""``paseo relay serve`` as a child process on a free loopback port, for tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

LISTENING = re.compile(r"Relay listening on ws://([^ ]+) ")


@contextmanager
def relay_serve(*extra: str, timeout: float = 30.0) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Start the relay; yields its ``host:port`` and the process; SIGTERM and reap after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "paseo", "relay", "serve", "--listen", "127.0.0.1:0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert process.stdout is not None
        # readline is bounded by the process: it prints the line or exits (EOF).
        line = process.stdout.readline()
        match = LISTENING.search(line)
        if match is None:
            process.kill()
            _, err = process.communicate(timeout=timeout)
            raise AssertionError(f"paseo relay serve did not start: {line!r} {err!r}")
        yield match.group(1), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
