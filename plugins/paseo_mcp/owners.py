"""Which agent created each schedule and worktree through the tools.

The caller rules give an agent the schedules and worktrees it created (and those its reach
extends to, docs/mcp.md), never the user's. Neither record has a place for its creator that
every writer keeps (the TypeScript Paseo and the CLI write them too), so the plugin keeps the
creator itself: ``owners.json`` in its state directory, ``{"schedules": {id: agentId},
"workspaces": {id: agentId}}``, written atomically (0600) before the tool answers. A schedule
or worktree missing from it was not created by an agent: only ``callerScope: all`` reaches it.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Literal

from paseo_hookspecs.atomic import atomic_write_json, read_json

log = logging.getLogger("paseo.plugins.mcp")

Kind = Literal["schedules", "workspaces"]
KINDS: tuple[Kind, ...] = ("schedules", "workspaces")


class Owners:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._owners: dict[str, dict[str, str]] | None = None

    def _loaded(self) -> dict[str, dict[str, str]]:
        if self._owners is None:
            self._owners = {kind: {} for kind in KINDS}
            try:
                raw: Any = read_json(self._path) if self._path.exists() else {}
            except (OSError, ValueError) as exc:
                # Unreadable: nothing is an agent's, which refuses rather than widens.
                log.warning("ignoring unreadable %s: %s", self._path, exc)
                raw = {}
            for kind in KINDS:
                entries = raw.get(kind) if isinstance(raw, dict) else None
                if isinstance(entries, dict):
                    self._owners[kind] = {
                        str(k): v for k, v in entries.items() if isinstance(v, str)
                    }
        return self._owners

    def owner(self, kind: Kind, item_id: str) -> str | None:
        with self._lock:
            return self._loaded()[kind].get(item_id)

    def record(self, kind: Kind, item_id: str, agent_id: str) -> None:
        with self._lock:
            owners = self._loaded()
            owners[kind][item_id] = agent_id
            self._write(owners)

    def forget(self, kind: Kind, item_id: str) -> None:
        with self._lock:
            owners = self._loaded()
            if owners[kind].pop(item_id, None) is not None:
                self._write(owners)

    def _write(self, owners: dict[str, dict[str, str]]) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self._path, owners, mode=0o600)
