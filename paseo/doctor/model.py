"""What a check reports, and what every check may look at."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from paseo.home import HomeLayout

Status = Literal["ok", "warn", "fail"]

STATUS_ORDER: dict[str, int] = {"ok": 0, "warn": 1, "fail": 2}


@dataclass(frozen=True)
class Check:
    """One finding: ``found`` says what is there, ``fix`` the exact thing to do (``None`` when
    nothing is to be done)."""

    group: str
    name: str
    status: Status
    found: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "status": self.status,
            "found": self.found,
            "fix": self.fix,
        }


@dataclass
class DoctorContext:
    """The home being examined and, when its daemon runs, how to reach it.

    ``status`` is the daemon's ``GET /api/status`` answer (``None`` when no daemon answers),
    fetched once by the runner so every group sees the same daemon.
    """

    layout: HomeLayout
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    running: bool = False
    status: dict[str, Any] | None = None
    pid_info: dict[str, Any] = field(default_factory=dict)
    rpc_listen: str | None = None
    daemon_note: str | None = None
    """Why a running daemon could not be asked (unreachable, refused credentials)."""
    cache: dict[str, Any] = field(default_factory=dict)
    """What several groups share, made by the first that needs it (the loaded plugins)."""

    @property
    def home(self) -> Path:
        return self.layout.root

    @property
    def answering(self) -> bool:
        """Whether the daemon runs and answered its status."""
        return self.running and self.status is not None
