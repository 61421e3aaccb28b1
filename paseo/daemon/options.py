"""What the daemon is started with, and how it tells its starter it is ready.

Kept apart from :mod:`paseo.daemon.bootstrap` so that the runtime and the controlling side
(:mod:`paseo.daemon.control`) share these names without importing each other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

READY_PREFIX = "PASEO_READY "
"""The line a detached daemon writes to stderr once it accepts connections."""


@dataclass(frozen=True)
class DaemonOptions:
    """What ``paseo daemon start`` was asked for."""

    home: Path
    foreground: bool = True
    listen: str | None = None
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))


class StartupError(Exception):
    """The daemon cannot start; the message says why and what to do."""
