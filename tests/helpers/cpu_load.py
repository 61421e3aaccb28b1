"""A loaded machine for stress tests: busy-loop processes, bounded in number and in time.

Each loop is a separate interpreter that spins until its own deadline, so none outlives the
test even if the test process dies; :func:`cpu_load` also kills them on exit.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

_SPIN = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@contextlib.contextmanager
def cpu_load(processes: int | None = None, *, seconds: float = 90.0) -> Iterator[None]:
    """Run ``processes`` busy loops (default: twice the CPUs, at most 4, i.e. a load average
    of ~5 on two cores with the test itself) for at most ``seconds``."""
    count = processes if processes is not None else min(4, 2 * (os.cpu_count() or 1))
    loops = [
        subprocess.Popen(
            [sys.executable, "-c", _SPIN.format(seconds=seconds)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait(timeout=10)
