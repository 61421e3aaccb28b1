"""The ``opencode`` provider: OpenCode (npm ``opencode-ai``) through one shared ``opencode serve``.

The program is ``opencode`` on the daemon's ``PATH`` unless a custom provider (``extends:
"opencode"``) names another ``command``. All sessions of a provider share one server
(:mod:`paseo_opencode.server`): started with the first session, restarted if it died, stopped
with the last one, always reaped. It runs with the provider's ``env`` (config.json) layered on
the environment of the session that started it; OpenCode reads its configuration from
``opencode.json`` / ``OPENCODE_CONFIG_CONTENT`` and its credentials from its data directory.

Models come from ``GET /provider`` (the connected providers; a model's variants become thinking
options); a custom provider's ``models`` replaces the list, ``additionalModels`` adds to it.
Modes: ``build`` (default: asks before edits, commands and fetches), ``plan`` (OpenCode's plan
agent), ``full-access`` (never asks) and every other primary OpenCode agent (asking). OpenCode's
own defaults run tools without asking, so each mode sets the session's rules explicitly.
Questions (``question.asked``) arrive as permission requests of kind ``question``: allow with
``updatedInput={"answers": [[label, …], …]}``, or deny to reject them.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    Availability,
    EventSink,
    ModeInfo,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher
from paseo_hookspecs.program_provider import ProgramProvider

from .http import HttpError
from .mapping import (
    BUILT_IN_MODES,
    NO_TOOLS,
    Mode,
    custom_mode,
    mode_by_id,
    models_of,
    selectable_agents,
)
from .server import AGENT_ID, SharedServer
from .session import OpenCodeSession
from .version import package_version

INSTALL_HINT = (
    "Install OpenCode with `npm install -g opencode-ai@1.18.33` (or set "
    "`agents.providers.<id>.command` in config.json to its path)."
)
LISTING_TTL = 600.0
"""Seconds a model or agent listing is reused."""

QUIET = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
}
"""Set unless the environment says otherwise: a supervised server neither updates itself nor
shares sessions."""


class OpenCodeProvider(ProgramProvider):
    """Runs sessions on one shared ``opencode serve``."""

    id = "opencode"
    label = "OpenCode"
    default_command = ("opencode",)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._servers: dict[tuple[tuple[str, str], ...], SharedServer] = {}
        """One server per distinct per-agent environment (``()``: agents without one)."""
        self._listing: tuple[float, list[ModelInfo], list[dict[str, Any]]] | None = None
        self._listing_lock = asyncio.Lock()

    def _shared(self, config: SessionConfig | None = None) -> SharedServer:
        """The server for ``config``'s session. OpenCode runs an agent's tools inside the
        server process, so an agent given variables of its own (a Hub create's ``env``) gets
        a server started with them: sharing one would hand them to every other agent, or miss
        them. Agents without any share the common server."""
        program = self._program()
        if program is None:
            raise Unavailable(
                f"the OpenCode program {self._command[0]!r} was not found. {INSTALL_HINT}"
            )
        key = tuple(
            sorted((k, v) for k, v in (config.env if config else {}).items() if k != AGENT_ID)
        )
        server = self._servers.get(key)
        if server is None:
            # Servers nobody leases are stopped: forget them before adding another.
            self._servers = {k: s for k, s in self._servers.items() if s.leased or not k}
            server = SharedServer(self.id, [program, *self._command[1:]], INSTALL_HINT)
            self._servers[key] = server
        return server

    def _env_for(self, config: SessionConfig | None) -> dict[str, str]:
        env = {**self._env, **(config.env if config else {})}
        for name, value in QUIET.items():
            if name not in env and name not in os.environ:
                env[name] = value
        return env

    async def availability(self) -> Availability:
        program = self._program()
        if program is None:
            return Availability(
                status="unavailable",
                reason=f"the OpenCode program {self._command[0]!r} was not found. {INSTALL_HINT}",
            )
        version = await asyncio.to_thread(package_version, program)
        # OpenCode always has its free "opencode" provider, so a missing key does not hang it:
        # credentials show up as connected providers in the model list.
        return Availability(status="ready", reason=f"OpenCode {version or '(version unknown)'}")

    # ------------------------------------------------------------------ models and modes

    async def _listings(
        self, launcher: ProcessLauncher
    ) -> tuple[list[ModelInfo], list[dict[str, Any]]]:
        async with self._listing_lock:
            if self._listing and time.monotonic() - self._listing[0] < LISTING_TTL:
                return list(self._listing[1]), list(self._listing[2])
            server = self._shared()
            server.acquire()
            try:
                client = await server.client(launcher, self._env_for(None), "/")
                query = {"directory": "/"}
                providers = await client.call("GET", "/provider", query=query)
                agents = await client.call("GET", "/agent", query=query)
                config = await client.call("GET", "/config", query=query)
            except (HttpError, OSError, TimeoutError) as exc:
                raise Unavailable(f"OpenCode could not list its models: {exc}") from exc
            finally:
                await server.release()
            configured = config.get("model") if isinstance(config, dict) else None
            models = models_of(providers, configured if isinstance(configured, str) else None)
            self._listing = (time.monotonic(), models, selectable_agents(agents))
            return list(self._listing[1]), list(self._listing[2])

    async def discover_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        return (await self._listings(launcher))[0]

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        agents = (await self._listings(launcher))[1]
        return [m.info for m in BUILT_IN_MODES.values()] + [custom_mode(a).info for a in agents]

    def _mode(self, mode_id: str | None) -> Mode:
        agents = self._listing[2] if self._listing else None
        mode = mode_by_id(mode_id, agents)
        if mode is None:
            raise InvalidParams(f"OpenCode has no mode {mode_id!r}")
        return mode

    # ------------------------------------------------------------------ sessions

    def supports_no_tools(self) -> bool:
        return True

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        if not await asyncio.to_thread(os.path.isdir, config.cwd):
            raise InvalidParams(f"the working directory {config.cwd} does not exist")
        return await OpenCodeSession.start(
            self.id,
            server=self._shared(config),
            launcher=launcher,
            env=self._env_for(config),
            config=config,
            sink=sink,
            mode=NO_TOOLS if config.noTools else self._mode(config.modeId),
        )

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        native = handle.nativeHandle if isinstance(handle.nativeHandle, dict) else {}
        session_id = native.get("sessionId") or handle.sessionId
        if not isinstance(session_id, str) or not session_id:
            raise NotFound("the persistence handle names no OpenCode session")
        return await OpenCodeSession.start(
            self.id,
            server=self._shared(config),
            launcher=launcher,
            env=self._env_for(config),
            config=config,
            sink=sink,
            mode=NO_TOOLS if config.noTools else self._mode(config.modeId),
            resume_id=session_id,
        )
