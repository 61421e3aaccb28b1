"""What the tools drive: the daemon's ports, as the plugin found them at start-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from paseo_hookspecs.agents import Agents
from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.providers import ProviderCatalog
from paseo_hookspecs.schedules import ScheduleControl
from paseo_hookspecs.terminal_control import TerminalControl
from paseo_hookspecs.voice import VoiceOutput
from paseo_hookspecs.workspaces import WorktreeControl

from paseo_mcp.settings import McpSettings


@dataclass(frozen=True)
class Ports:
    agents: Agents
    settings: Callable[[], McpSettings]
    """The settings in force (a reload changes ``callerScope`` at once)."""
    providers: ProviderCatalog | None = None
    schedules: ScheduleControl | None = None
    worktrees: WorktreeControl | None = None
    terminals: TerminalControl | None = None
    voice: VoiceOutput | None = None

    def need_providers(self) -> ProviderCatalog:
        return _need(self.providers, "the provider catalog")

    def need_schedules(self) -> ScheduleControl:
        return _need(self.schedules, "schedules")

    def need_worktrees(self) -> WorktreeControl:
        return _need(self.worktrees, "worktrees")

    def need_terminals(self) -> TerminalControl:
        return _need(self.terminals, "terminals")


T = TypeVar("T")


def _need(port: T | None, what: str) -> T:
    if port is None:
        raise Unavailable(f"this daemon offers no {what} to plugins")
    return port
