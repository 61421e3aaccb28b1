"""The generic ``acp`` provider: any Agent Client Protocol agent program over stdio.

The bare ``acp`` provider has no program of its own; it is used through custom providers
(``agents.providers.<id>`` with ``"extends": "acp"`` and a ``command``), which the registry
builds with :meth:`AcpProvider.derive`, or with ``SessionConfig.extra["command"]`` per session.
Models, modes and thinking levels are whatever the agent advertises for a session. Listing them
reads what the provider's first live session reported; before any session, one short-lived probe
session runs (at most one at a time, with its own :data:`PROBE_TIMEOUT`, cached per provider).
The probe runs as a task of its own: a caller that stops waiting (the kernel bounds a listing
more tightly than slow agents start: ``opencode acp`` takes 20-35 s here) does not cancel it,
and the next listing gets its result.

Built-in programs (``copilot``, ``omp``) subclass :class:`AcpProvider` with a default command,
their own availability check and their own launch arguments; they stay in this plugin because
a plugin imports nothing but ``paseo_hookspecs`` and libraries, so they cannot import this
package from a plugin of their own.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any, ClassVar

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

    DEFAULT_ID: ClassVar[str] = "acp"
    DEFAULT_LABEL: ClassVar[str] = "ACP agent"
    DEFAULT_COMMAND: ClassVar[tuple[str, ...] | None] = None
    """The argv when neither the session nor the provider's config names a ``command``."""

    def __init__(
        self,
        provider_id: str | None = None,
        label: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.id = provider_id or self.DEFAULT_ID
        self.label = label or self.DEFAULT_LABEL
        self._overrides: dict[str, Any] = dict(overrides or {})
        self._probed: SessionOptions | None = None
        self._probe_task: asyncio.Task[SessionOptions | None] | None = None

    # ------------------------------------------------------------------ configuration

    def command(self, config: SessionConfig | None = None) -> list[str] | None:
        """The agent's argv: ``SessionConfig.extra["command"]`` (per session) or the
        provider's configured ``command``; ``None`` when neither is set."""
        if config is not None and "command" in config.extra:
            return _argv(config.extra["command"])
        if "command" in self._overrides:
            return _argv(self._overrides["command"])
        return list(self.DEFAULT_COMMAND) if self.DEFAULT_COMMAND else None

    def launch_argv(self, argv: list[str], config: SessionConfig) -> list[str]:
        """The argv actually started for ``config`` (built-ins add flags a mode needs)."""
        return argv

    def session_config(self, config: SessionConfig) -> SessionConfig:
        """The config the ACP session applies (built-ins translate their own mode ids)."""
        return config

    def _env(self, config: SessionConfig) -> dict[str, str]:
        env = self.configured_env()
        env.update(config.env)
        return env

    def configured_env(self) -> dict[str, str]:
        """The provider's ``env`` from config.json (layered over the daemon's environment)."""
        return {str(k): str(v) for k, v in dict(self._overrides.get("env") or {}).items()}

    def effective_env(self) -> dict[str, str]:
        """What a started program sees: the daemon's environment under the provider's ``env``
        (availability checks read credentials from it)."""
        return {**os.environ, **self.configured_env()}

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
        # The same class: a custom provider extending ``copilot`` keeps Copilot's checks.
        derived = type(self)(provider_id, label, merged)
        if derived.command() is None:
            # The generic ACP client has no default program to fall back on.
            raise InvalidParams(
                f'provider "{provider_id}" extends "{self.id}" and must declare command '
                f'(agents.providers.{provider_id}.command, the agent\'s argv)',
                data={"path": f"agents.providers.{provider_id}.command"},
            )
        return derived

    # ------------------------------------------------------------------ provider interface

    async def availability(self) -> Availability:
        argv = self.command()
        if argv is None:
            return Availability(status="unavailable", reason=self._missing_command())
        found = await asyncio.to_thread(self.find_program, argv[0])
        if found is None:
            return Availability(
                status="unavailable",
                reason=(
                    f"{argv[0]!r} was not found on PATH: {self.install_hint()}or fix "
                    f"agents.providers.{self.id}.command"
                ),
            )
        return Availability(status="ready")

    def find_program(self, program: str) -> str | None:
        """``program`` resolved on the ``PATH`` the started program gets."""
        return shutil.which(program, path=self.effective_env().get("PATH", os.defpath))

    def install_hint(self) -> str:
        """How to install the program (ends with a space), for availability reasons."""
        return "install the agent "

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
        """What a session offers: the first live session's report, else one shared probe."""
        if self._probed is not None or self.command() is None:
            return self._probed
        if self._probe_task is None or self._probe_task.done():
            self._probe_task = asyncio.create_task(self._run_probe(launcher))
        # Shielded: a caller's own timeout must not kill the one probe everybody waits for.
        return await asyncio.shield(self._probe_task)

    async def _run_probe(self, launcher: ProcessLauncher) -> SessionOptions | None:
        """Start a throw-away session in an empty directory to read what the agent offers."""
        workdir = await asyncio.to_thread(tempfile.mkdtemp, prefix="paseo-acp-probe-")
        config = SessionConfig(agentId=f"probe-{self.id}", cwd=workdir)
        try:
            session = await self._start(config, _discard, launcher, None, PROBE_TIMEOUT)
        except Exception as exc:
            # A failed probe is an error for whoever asked (`provider models` must not print an
            # empty table as if the agent offered nothing); not cached, so the next listing
            # tries again.
            log.warning("probing ACP provider %s failed: %s", self.id, exc)
            raise Unavailable(
                f"could not list what ACP provider {self.id!r} offers: its probe session "
                f"failed ({exc}); check agents.providers.{self.id}.command"
            ) from exc
        else:
            await session.close()
            self._remember(session.options)
            return self._probed
        finally:
            await asyncio.to_thread(shutil.rmtree, workdir, True)

    def _remember(self, options: SessionOptions) -> None:
        if self._probed is None and (options.mode.choices or options.model.choices):
            # A copy: the live session's own options change with its settings.
            self._probed = copy.deepcopy(options)

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
        session = await AcpSession.start(
            provider_id=self.id,
            argv=self.launch_argv(argv, config),
            env=self._env(config),
            config=self.session_config(config),
            sink=sink,
            launcher=launcher,
            resume_session_id=resume_session_id,
            startup_timeout=startup_timeout,
        )
        # A live session's report answers later listings without a probe of its own.
        self._remember(session.options)
        return session
