"""Bounded polling: tests wait for a condition, never for a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(
    predicate: Callable[[], object], timeout: float = 20.0, what: str = "condition"
) -> None:
    """Poll ``predicate`` every 50 ms until it is truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
