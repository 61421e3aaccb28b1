"""The generic ``acp`` provider: any Agent Client Protocol agent program over stdio.

The bare ``acp`` provider has no program of its own; it is used through custom providers
(``agents.providers.<id>`` with ``"extends": "acp"`` and a ``command``), which the registry
builds with :meth:`AcpProvider.derive`, or with ``SessionConfig.extra["command"]`` per session.
Models, modes and thinking levels are whatever the agent advertises for a session; listing them
without a session starts a short-lived probe session (cached per provider).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.events import AgentEvent
from paseo_hookspecs.interfaces.agent import (
    AgentProvider,
    AgentSession,
    Availability,
    EventSink,
    ModeInfo,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
    ThinkingOption,
)
from paseo_hookspecs.process import ProcessLauncher

from paseo_acp._options import SessionOptions
from paseo_acp.session import DEFAULT_STARTUP_TIMEOUT, AcpSession

log = logging.getLogger("paseo_acp.provider")

PROBE_TIMEOUT = 60.0
"""Seconds a model/mode probe session may take before listing gives up (empty list)."""


def _argv(command: Any) -> list[str] | None:
    if isinstance(command, str):
        argv = shlex.split(command)
    elif isinstance(command, list | tuple) and all(isinstance(part, str) for part in command):
        argv = list(command)
    else:
        return None
    return argv or None


def _model_info(entry: Mapping[str, Any]) -> ModelInfo | None:
    model_id = entry.get("id")
    if not isinstance(model_id, str) or not model_id:
        return None
    return ModelInfo(
        id=model_id,
        label=str(entry.get("label") or model_id),
        default=bool(entry.get("isDefault") or entry.get("default")),
        thinkingOptions=[
            ThinkingOption(id=str(t["id"]), label=str(t.get("label") or t["id"]))
            for t in entry.get("thinkingOptions") or []
            if isinstance(t, Mapping) and isinstance(t.get("id"), str)
        ],
    )


def _configured_models(value: Any) -> list[ModelInfo] | None:
    if not isinstance(value, list):
        return None
    return [m for m in (_model_info(e) for e in value if isinstance(e, Mapping)) if m is not None]


async def _discard(_event: AgentEvent) -> None:
    """The event sink of a probe session: nobody is listening."""


class AcpProvider(AgentProvider):
    """Drives an ACP agent program; see the module docstring."""

    def __init__(
        self,
        provider_id: str = "acp",
        label: str = "ACP agent",
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.id = provider_id
        self.label = label
        self._overrides: dict[str, Any] = dict(overrides or {})
        self._probed: SessionOptions | None = None
        self._probe_lock = asyncio.Lock()

    # ------------------------------------------------------------------ configuration

    def command(self, config: SessionConfig | None = None) -> list[str] | None:
        """The agent's argv: ``SessionConfig.extra["command"]`` (per session) or the
        provider's configured ``command``; ``None`` when neither is set."""
        if config is not None and "command" in config.extra:
            return _argv(config.extra["command"])
        return _argv(self._overrides.get("command"))

    def _env(self, config: SessionConfig) -> dict[str, str]:
        env = {str(k): str(v) for k, v in dict(self._overrides.get("env") or {}).items()}
        env.update(config.env)
        return env

    def _startup_timeout(self, config: SessionConfig) -> float:
        value = config.extra.get("startupTimeout", self._overrides.get("startupTimeout"))
        if isinstance(value, int | float) and value > 0:
            return float(value)
        return DEFAULT_STARTUP_TIMEOUT

    def _missing_command(self) -> str:
        if self.id == "acp":
            return (
                "the generic acp provider needs an agent command: add a custom provider in "
                'config.json, e.g. agents.providers.my-agent = {"extends": "acp", "label": '
                '"My agent", "command": ["my-acp-agent"]}'
            )
        return f"set agents.providers.{self.id}.command in config.json to the agent's argv"

    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        """A custom ACP provider: ``overrides`` (command, env, models, additionalModels, …)
        layered over this provider's own; it reports ``provider_id`` everywhere."""
        merged = {**self._overrides, **{k: v for k, v in overrides.items() if v is not None}}
        if not merged.get("command"):
            # The generic ACP client has no default program to fall back on.
            raise InvalidParams(
                f'provider "{provider_id}" extends "acp" and must declare command '
                f'(agents.providers.{provider_id}.command, the agent\'s argv)',
                data={"path": f"agents.providers.{provider_id}.command"},
            )
        return AcpProvider(provider_id, label, merged)

    # ------------------------------------------------------------------ provider interface

    async def availability(self) -> Availability:
        argv = self.command()
        if argv is None:
            return Availability(status="unavailable", reason=self._missing_command())
        found = await asyncio.to_thread(shutil.which, argv[0])
        if found is None:
            return Availability(
                status="unavailable",
                reason=(
                    f"{argv[0]!r} was not found on PATH: install the agent or fix "
                    f"agents.providers.{self.id}.command"
                ),
            )
        return Availability(status="ready")

    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        configured = _configured_models(self._overrides.get("models"))
        models = configured if configured is not None else await self._probe_models(launcher)
        additional = _configured_models(self._overrides.get("additionalModels")) or []
        by_id = {model.id: model for model in models}
        for model in additional:
            by_id[model.id] = model
        return list(by_id.values())

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        options = await self._probe(launcher)
        return options.modes() if options is not None else []

    async def _probe_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        options = await self._probe(launcher)
        return options.models() if options is not None else []

    async def _probe(self, launcher: ProcessLauncher) -> SessionOptions | None:
        """Start a throw-away session in an empty directory to read what the agent offers."""
        async with self._probe_lock:
            if self._probed is not None or self.command() is None:
                return self._probed
            workdir = await asyncio.to_thread(tempfile.mkdtemp, prefix="paseo-acp-probe-")
            config = SessionConfig(agentId=f"probe-{self.id}", cwd=workdir)
            try:
                session = await self._start(config, _discard, launcher, None, PROBE_TIMEOUT)
            except Exception as exc:
                # A failed probe is an error for whoever asked (`provider models` must not
                # print an empty table as if the agent offered nothing); not cached, so the
                # next listing tries again.
                log.warning("probing ACP provider %s failed: %s", self.id, exc)
                raise Unavailable(
                    f"could not list what ACP provider {self.id!r} offers: its probe session "
                    f"failed ({exc}); check agents.providers.{self.id}.command"
                ) from exc
            else:
                await session.close()
                self._probed = session.options
                return self._probed
            finally:
                await asyncio.to_thread(shutil.rmtree, workdir, True)

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        return await self._start(config, sink, launcher, None, self._startup_timeout(config))

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        """``session/load`` the conversation when the agent can; otherwise a new session that
        says so in the timeline."""
        session_id = handle.nativeHandle if isinstance(handle.nativeHandle, str) else None
        return await self._start(
            config, sink, launcher, session_id or handle.sessionId, self._startup_timeout(config)
        )

    async def _start(
        self,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
        resume_session_id: str | None,
        startup_timeout: float,
    ) -> AcpSession:
        argv = self.command(config)
        if argv is None:
            raise Unavailable(self._missing_command())
        if not await asyncio.to_thread(os.path.isdir, config.cwd):
            raise InvalidParams(f"the working directory {config.cwd!r} does not exist")
        return await AcpSession.start(
            provider_id=self.id,
            argv=argv,
            env=self._env(config),
            config=config,
            sink=sink,
            launcher=launcher,
            resume_session_id=resume_session_id,
            startup_timeout=startup_timeout,
        )
