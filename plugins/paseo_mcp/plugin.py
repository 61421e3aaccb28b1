"""The MCP plugin's hooks: its settings section; at start-up the token guard, the session
contributor, the notifyOnFinish observer and the HTTP mount.

Everything runs on the contract's ports (``DaemonContext.agents`` and the narrow ports of
schedules, worktrees, terminals, providers and voice); the daemon only screens the mounted
path as it screens ``/ws``. With ``enabled`` false (or ``PASEO_MCP=false``) the plugin mounts
and injects nothing.

The SDK (and what it pulls in: starlette, an HTTP client, JSON Schema, telemetry) is imported
in a thread, not at start-up: importing it before the daemon is ready doubled start-to-ready
(``bench/daemon.py``) for a server most runs call late or never. It is warmed when the first
agent session is given the server (:meth:`LazyMcpApp.warm`), while the agent program starts,
not on the program's first request: that import takes seconds on a loaded machine, and an agent
program that does not hear back within its MCP connect timeout starts its turn without the
server's tools (Claude Code waits ~25 s, Codex 10 s by default).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paseo_hookspecs import hookimpl
from paseo_hookspecs.agents import Subscription
from paseo_hookspecs.http import AsgiReceive, AsgiScope, AsgiSend, HttpMounting
from paseo_hookspecs.mcp_tools import McpToolSource
from paseo_hookspecs.registration import (
    ConfigSection,
    ConfigSectionRegistrar,
    DoctorCheckRegistrar,
)
from paseo_hookspecs.schedules import ScheduleSource
from paseo_hookspecs.terminal_control import TerminalSource
from paseo_hookspecs.voice import VoiceSource
from paseo_hookspecs.workspaces import WorktreeSource

from paseo_mcp.settings import LIVE, LOCAL_ONLY, PLUGIN_ID, McpSettings, read_settings

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext

    from paseo_mcp.handlers import Tooling
    from paseo_mcp.server import McpApp
    from paseo_mcp.tools import ToolSpec

STATE_DIR = ("plugin-data", PLUGIN_ID)
"""The plugin's own files under ``$PASEO_HOME``: the token key, the notice queue and who
created which schedule and worktree."""

LEGACY_NOTICES = ("mcp", "notices.json")
"""Where the notice queue was kept before the MCP server was a plugin of its own."""


def state_dir(home: Path) -> Path:
    return home.joinpath(*STATE_DIR)


class LazyMcpApp:
    """The mounted ASGI app: builds the SDK server when warmed or on its first request.

    The tool handlers and the tools other plugins contribute are built then too (``tooling``,
    ``contributed``): their modules and input models cost a start that may never serve MCP.
    """

    def __init__(
        self,
        tooling: Callable[[], Tooling],
        version: str,
        log: logging.Logger,
        contributed: Callable[[], tuple[ToolSpec, ...]] = tuple,
    ) -> None:
        self._tooling = tooling
        self._contributed = contributed
        self._version = version
        self._log = log
        self._app: McpApp | None = None
        self._lock = asyncio.Lock()
        self._warming: asyncio.Task[McpApp] | None = None
        self._stopped = False

    @property
    def loaded(self) -> bool:
        return self._app is not None

    async def __call__(self, scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
        app = self._app or await self._load()
        await app(scope, receive, send)

    def warm(self) -> None:
        """Start building the server in the background (once), if it is not built yet."""
        if self._app is not None or self._warming is not None or self._stopped:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the daemon's loop: the first request builds it
            return
        self._warming = loop.create_task(self._load(), name="paseo-mcp-warm")
        self._warming.add_done_callback(self._warmed)

    def _warmed(self, task: asyncio.Task[McpApp]) -> None:
        if not task.cancelled() and task.exception() is not None:
            # The first request tries again (and fails visibly to its caller).
            self._warming = None
            self._log.warning("could not load the MCP server: %s", task.exception())

    async def _load(self) -> McpApp:
        async with self._lock:
            if self._app is None:
                module = await asyncio.to_thread(importlib.import_module, "paseo_mcp.server")
                app: McpApp = module.McpApp(self._tooling(), self._version, self._contributed())
                app.start()
                self._app = app
                if self._stopped:  # stopped while the import ran
                    app.request_stop()
            return self._app

    def request_stop(self) -> None:
        self._stopped = True
        if self._app is not None:
            self._app.request_stop()


class McpPlugin:
    def __init__(self) -> None:
        self._app: LazyMcpApp | None = None
        self._undo: list[Callable[[], None]] = []
        self._subscription: Subscription | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @hookimpl
    def paseo_register_doctor_checks(self, register: DoctorCheckRegistrar) -> None:
        """``paseo doctor``: the endpoint as an agent reaches it."""
        from paseo_hookspecs.doctor import DoctorCheck

        from paseo_mcp.doctor import check

        register(DoctorCheck("mcp", check))

    @hookimpl
    def paseo_register_config_sections(self, register: ConfigSectionRegistrar) -> None:
        register(
            ConfigSection(
                McpSettings,
                "the MCP server for agents (docs/mcp.md)",
                live=LIVE,
                local_only=LOCAL_ONLY,
            )
        )

    @hookimpl
    def paseo_startup(self, context: DaemonContext) -> None:
        from paseo_mcp.daemon import Ports
        from paseo_mcp.guard import MCP_PATH, TokenGuard
        from paseo_mcp.notices import FinishNotices
        from paseo_mcp.tokens import CapabilityTokens

        log = context.log.getChild(PLUGIN_ID)

        def settings() -> McpSettings:
            return read_settings(context.config_section(PLUGIN_ID))

        if not settings().enabled:
            return
        if not isinstance(context, HttpMounting):
            log.warning("this daemon serves no plugin HTTP routes; the MCP server is off")
            return
        agents = context.agents
        ports = Ports(
            agents=agents,
            settings=settings,
            providers=context.providers,
            schedules=context.schedules if isinstance(context, ScheduleSource) else None,
            worktrees=context.worktrees if isinstance(context, WorktreeSource) else None,
            terminals=context.terminals if isinstance(context, TerminalSource) else None,
            voice=context.voice if isinstance(context, VoiceSource) else None,
        )
        home = state_dir(context.home)

        def tooling() -> Tooling:
            from paseo_mcp.handlers import Tooling
            from paseo_mcp.owners import Owners
            from paseo_mcp.rules import CallerRules

            return Tooling(ports, CallerRules(ports), Owners(home / "owners.json"))

        def contributed() -> tuple[ToolSpec, ...]:
            from paseo_mcp.contributed import contributed_specs

            return contributed_specs(
                context.mcp_tools if isinstance(context, McpToolSource) else ()
            )

        app = LazyMcpApp(tooling, context.version, log, contributed)
        guard = TokenGuard(ports, CapabilityTokens.rotate(home), context.http_url, app.warm)
        notices = FinishNotices(
            home / "notices.json", agents, legacy_path=context.home.joinpath(*LEGACY_NOTICES)
        )
        self._subscription = agents.subscribe(notices, name=PLUGIN_ID)
        self._undo.append(agents.add_session_contributor(guard))
        self._app = app
        self._undo.append(context.mount_http(MCP_PATH, guard.guarded(self._app)))
        # Recovering the queue reads agents' timelines, which readiness need not wait for
        # (attentions arriving meanwhile wait for it).
        task = asyncio.get_running_loop().create_task(notices.load(), name="paseo-mcp-notices")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @hookimpl
    def paseo_shutdown(self, context: DaemonContext) -> None:
        app, self._app = self._app, None
        if app is not None:
            app.request_stop()
        undo, self._undo = self._undo, []
        for step in reversed(undo):
            with contextlib.suppress(Exception):
                step()
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            subscription.close()
        # Queued notices are durable: an unfinished delivery happens on the next start.
        for task in list(self._tasks):
            task.cancel()


plugin = McpPlugin()
