"""Helpers of the terminal tests: a client wrapper and process checks."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for

from paseo.client.sync import SyncClient

CURSES_SCRIPT = """\
import curses

def main(screen):
    curses.curs_set(0)
    screen.clear()
    screen.addstr(5, 10, "PASEO-CURSES-READY")
    screen.addstr(6, 10, "width=%d" % curses.COLS)
    screen.refresh()
    screen.getch()

curses.wrapper(main)
"""


@dataclass
class Terminals:
    """A connected client and shortcuts for the terminal calls."""

    daemon: LiveDaemon
    client: SyncClient
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def record(self, method: str, params: dict[str, Any]) -> None:
        self.events.append((method, params))

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.client.call(method, params or {})

    def workspace(self, path: Path) -> str:
        path.mkdir(parents=True, exist_ok=True)
        opened = self.call("workspace.open", {"path": str(path)})
        workspace_id: str = opened["workspace"]["workspaceId"]
        return workspace_id

    def create(self, **params: Any) -> dict[str, Any]:
        terminal: dict[str, Any] = self.call("terminal.create", params)["terminal"]
        return terminal

    def type(self, terminal_id: str, text: str) -> None:
        self.call("terminal.input", {"terminalId": terminal_id, "data": text})

    def lines(self, terminal_id: str, **params: Any) -> list[str]:
        lines: list[str] = self.call("terminal.capture", {"terminalId": terminal_id, **params})[
            "lines"
        ]
        return lines

    def wait_line(self, terminal_id: str, wanted: str, timeout: float = 20.0) -> list[str]:
        seen: list[str] = []

        def found() -> bool:
            seen[:] = self.lines(terminal_id)
            return any(line.strip() == wanted for line in seen)

        wait_for(found, timeout, f"a line {wanted!r} in the terminal")
        return seen

    def info(self, terminal_id: str) -> dict[str, Any]:
        for terminal in self.call("terminal.list")["terminals"]:
            if terminal["terminalId"] == terminal_id:
                return dict(terminal)
        raise AssertionError(f"terminal {terminal_id} is not listed")


def session_alive(sid: int) -> list[int]:
    """Live (non-zombie) processes of session ``sid``."""
    alive = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getsid(process.pid) == sid and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process.pid)
    return alive


