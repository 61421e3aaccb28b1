"""Where things live under ``$PASEO_HOME``: the data-model seed's directory layout.

Nothing here touches the filesystem except :meth:`HomeLayout.create_root`, which the daemon
calls only after argument parsing succeeded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOME = "~/.paseo"


def resolve_home(
    explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """``--home``, else ``$PASEO_HOME``, else ``~/.paseo``; absolute, never created here."""
    environ = os.environ if env is None else env
    raw = os.fspath(explicit) if explicit else environ.get("PASEO_HOME") or DEFAULT_HOME
    return Path(os.path.abspath(os.path.expanduser(raw)))


@dataclass(frozen=True)
class HomeLayout:
    """Every path of the state root."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def server_id(self) -> Path:
        return self.root / "server-id"

    @property
    def keypair(self) -> Path:
        return self.root / "daemon-keypair.json"

    @property
    def pid(self) -> Path:
        return self.root / "paseo.pid"

    @property
    def lock(self) -> Path:
        """The OS lock held for the daemon's whole life (separate from the pid marker, which
        is replaced atomically and so cannot carry a lock itself)."""
        return self.root / "paseo.pid.lock"

    @property
    def local_credential(self) -> Path:
        return self.root / "local-credential"

    @property
    def app_tokens(self) -> Path:
        return self.root / "app-tokens.json"

    @property
    def log(self) -> Path:
        return self.root / "daemon.log"

    @property
    def agents(self) -> Path:
        return self.root / "agents"

    @property
    def schedules(self) -> Path:
        return self.root / "schedules"

    @property
    def projects(self) -> Path:
        return self.root / "projects"

    @property
    def project_icons(self) -> Path:
        return self.projects / "icons"

    @property
    def managed_processes(self) -> Path:
        return self.root / "runtime" / "managed-processes"

    @property
    def plugins(self) -> Path:
        return self.root / "plugins"

    @property
    def plugin_sources(self) -> Path:
        return self.plugins / "sources.json"

    @property
    def push_tokens(self) -> Path:
        return self.root / "push-tokens.json"

    @property
    def worktrees(self) -> Path:
        return self.root / "worktrees"

    def create_root(self) -> None:
        """Create the state root (0700) if it does not exist."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
