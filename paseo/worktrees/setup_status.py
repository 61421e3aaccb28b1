"""The last setup of each workspace, as the app's setup panel shows it.

The worktree service streams setup progress (``worktree.progress``: ``command_started``,
``output``, ``command_completed``); this keeps, per workspace, the commands that ran with
their status, exit code, duration and output, and the setup's state: ``running`` while a
command runs, ``failed`` when one exited non-zero (or was killed), ``completed`` when the last
exited 0. Bounded: :data:`MAX_LOG` characters of output per command and of the whole log (the
tail wins, ``truncated`` says so), :data:`MAX_WORKSPACES` workspaces (the oldest forgotten).
A workspace with no setup commands has no entry.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

MAX_LOG = 64 * 1024
MAX_WORKSPACES = 256


@dataclass
class SetupCommand:
    index: int
    command: str
    cwd: str
    status: str = "running"
    exitCode: int | None = None
    durationMs: int | None = None
    log: str = ""


@dataclass
class SetupRun:
    workspaceId: str
    path: str | None = None
    branch: str | None = None
    status: str = "running"
    commands: list[SetupCommand] = field(default_factory=list)
    log: str = ""
    truncated: bool = False
    error: str | None = None
    shown: bool = False
    """Recorded in an agent's timeline already."""

    def to_json(self) -> dict[str, Any]:
        return {
            "workspaceId": self.workspaceId,
            "path": self.path,
            "branch": self.branch,
            "status": self.status,
            "commands": [dict(c.__dict__) for c in self.commands],
            "log": self.log,
            "truncated": self.truncated,
            "error": self.error,
        }


class SetupLog:
    """See the module docstring."""

    def __init__(self) -> None:
        self._runs: OrderedDict[str, SetupRun] = OrderedDict()

    def get(self, workspace_id: str) -> SetupRun | None:
        return self._runs.get(workspace_id)

    def claim(self, workspace_id: str) -> dict[str, Any] | None:
        """The workspace's finished setup, once (to the first agent started there)."""
        run = self._runs.get(workspace_id)
        if run is None or run.shown or run.status == "running":
            return None
        run.shown = True
        return run.to_json()

    def observe(self, method: str, payload: dict[str, Any]) -> None:
        """Take one published notification (only setup progress matters)."""
        if method != "worktree.progress" or payload.get("phase") != "setup":
            return
        workspace_id = str(payload.get("workspaceId") or payload.get("worktreeId") or "")
        event = payload.get("event") or {}
        kind = event.get("type")
        if not workspace_id or not isinstance(event, dict):
            return
        run = self._runs.get(workspace_id)
        if kind == "command_started":
            if run is None or event.get("index") == 1:
                run = SetupRun(workspace_id, payload.get("path"), payload.get("branch"))
                self._runs[workspace_id] = run
                self._runs.move_to_end(workspace_id)
                while len(self._runs) > MAX_WORKSPACES:
                    self._runs.popitem(last=False)
            run.status = "running"
            run.commands.append(
                SetupCommand(int(event.get("index") or 1), str(event["command"]), str(event["cwd"]))
            )
            return
        if run is None or not run.commands:
            return
        current = run.commands[-1]
        if kind == "output":
            chunk = str(event.get("chunk") or "")
            current.log = (current.log + chunk)[-MAX_LOG:]
            joined = run.log + chunk
            if len(joined) > MAX_LOG:
                run.truncated = True
            run.log = joined[-MAX_LOG:]
        elif kind == "command_completed":
            code = event.get("exitCode")
            current.exitCode = code if isinstance(code, int) else None
            current.durationMs = event.get("durationMs")
            current.status = "completed" if code == 0 else "failed"
            if code != 0:
                run.status = "failed"
                shown = f"exit {code}" if code is not None else "killed"
                run.error = f"setup command failed ({shown}): {current.command}"
            elif current.index >= int(event.get("total") or current.index):
                run.status = "completed"
