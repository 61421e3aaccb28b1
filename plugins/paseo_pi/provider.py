"""The ``pi`` provider: the Pi coding agent (``@mariozechner/pi-coding-agent``) in RPC mode.

The program is ``pi`` on the daemon's ``PATH`` unless a custom provider (``extends: "pi"``)
names another ``command``. Pi keeps its models, credentials and sessions in ``~/.pi/agent`` of
the daemon's user (or ``$PI_CODING_AGENT_DIR``); a custom provider's ``env`` may point it
elsewhere. Pi 0.73.x runs on Node 20; 1.x (``@earendil-works/pi-coding-agent``) needs Node 22.

Models are ``provider/id`` as Pi lists them (``get_available_models`` of a short-lived
``pi --mode rpc --no-session``, cached): the models of ``models.json`` and of every built-in
provider Pi has a key for. Reasoning models get Pi's thinking levels. A custom provider's
``models`` replaces the list and ``additionalModels`` adds to it.

Pi has **no modes and no permission prompts**: the model's tool calls (``bash``, ``read``,
``write``, ``edit``) run at once and the timeline shows them. ``list_modes`` is empty and the
session's ``runtime_info`` carries ``permissionPrompts: false``. Resuming opens the session
file Pi reported (kept as the persistence handle's ``nativeHandle``). ``PI_OFFLINE=1`` is set
unless the environment says otherwise: a supervised agent must not update itself at start-up.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    Availability,
    EventSink,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher
from paseo_hookspecs.program_provider import ProgramProvider

from .mapping import model_info
from .rpc import PiConnection, PiGone, PiRefused
from .session import INSTALL_HINT, START_TIMEOUT, PiSession

KEY_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "CEREBRAS_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AI_GATEWAY_API_KEY",
    "ZAI_API_KEY",
)
"""Variables Pi 0.73 reads a built-in provider's key from (a subset: the common ones)."""

NO_TOOLS_ARGS = ("--no-tools", "--no-extensions")
"""``SessionConfig.noTools``: Pi offers the model no tool and loads no extension."""


def override_model(entry: Any) -> ModelInfo | None:
    """A ``models``/``additionalModels`` entry (an id, or a ModelInfo-shaped dict)."""
    if isinstance(entry, str) and entry:
        return ModelInfo(id=entry, label=entry)
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        data = {"label": entry["id"], **entry}
        return ModelInfo.model_validate(
            {k: v for k, v in data.items() if k in ModelInfo.model_fields}
        )
    return None


def package_version(program: str, package: str) -> str | None:
    """The version in the ``package.json`` of ``package`` that holds ``program`` (an npm
    binary is a link into its package), read without running anything."""
    here = Path(os.path.realpath(program)).parent
    for folder in (here, *here.parents):
        manifest = folder / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text())
            except (OSError, ValueError):
                return None
            if isinstance(data, dict) and data.get("name") == package:
                version = data.get("version")
                return version if isinstance(version, str) else None
    return None


def _configured(agent_dir: Path) -> bool:
    """Whether ``models.json`` names a provider or ``auth.json`` holds a login."""
    for name, key in (("models.json", "providers"), ("auth.json", None)):
        try:
            data = json.loads((agent_dir / name).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and (data.get(key) if key else data):
            return True
    return False


class PiProvider(ProgramProvider):
    """Runs ``pi --mode rpc`` sessions."""

    id = "pi"
    label = "Pi"
    default_command = ("pi",)
    default_start_timeout = START_TIMEOUT

    # ------------------------------------------------------------------ the program

    def _argv(self) -> list[str]:
        program = self._program()
        if program is None:
            raise Unavailable(f"the Pi program {self._command[0]!r} was not found. {INSTALL_HINT}")
        return [program, *self._command[1:]]

    def _session_env(self, config: SessionConfig | None) -> dict[str, str]:
        env = {**self._env, **(config.env if config else {})}
        if "PI_OFFLINE" not in env and "PI_OFFLINE" not in os.environ:
            env["PI_OFFLINE"] = "1"
        return env

    def _agent_dir(self, env: Mapping[str, str]) -> Path:
        merged = {**os.environ, **env}
        if merged.get("PI_CODING_AGENT_DIR"):
            return Path(merged["PI_CODING_AGENT_DIR"]).expanduser()
        return Path(merged.get("HOME") or Path.home()) / ".pi" / "agent"

    async def availability(self) -> Availability:
        program = self._program()
        if program is None:
            return Availability(
                status="unavailable",
                reason=f"the Pi program {self._command[0]!r} was not found. {INSTALL_HINT}",
            )
        version = await asyncio.to_thread(package_version, program, "@mariozechner/pi-coding-agent")
        named = f"Pi {version}" if version else f"Pi at {program}"
        env = self._session_env(None)
        agent_dir = self._agent_dir(env)
        keyed = any({**os.environ, **env}.get(name) for name in KEY_VARIABLES)
        if not keyed and not await asyncio.to_thread(_configured, agent_dir):
            return Availability(
                status="unavailable",
                reason=(
                    f"{named} has no model credentials: add a provider to "
                    f"{agent_dir / 'models.json'}, log in with `pi` (/login), or set a key "
                    f"variable such as ANTHROPIC_API_KEY or OPENAI_API_KEY"
                ),
            )
        return Availability(status="ready", reason=named)

    # ------------------------------------------------------------------ models

    async def discover_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        argv = [*self._argv(), "--mode", "rpc", "--no-session"]
        try:
            # Listing models reads no project: any existing directory will do.
            process = await launcher.launch(
                argv, cwd="/", env=self._session_env(None), provider=self.id
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise Unavailable(f"cannot run {argv[0]!r}: {exc}. {INSTALL_HINT}") from exc

        async def ignore(*_args: Any) -> None:
            return None

        conn = PiConnection(process, ignore, ignore)
        try:
            state = await conn.request("get_state", self._start_timeout)
            listed = await conn.request("get_available_models", self._start_timeout)
        except (PiGone, PiRefused, TimeoutError) as exc:
            tail = process.stderr_tail(1000).strip()
            raise Unavailable(
                f"Pi could not list its models ({exc or 'timed out'}): {tail}"
            ) from exc
        finally:
            await process.terminate()
            await conn.stop()
        current = state.get("model") if isinstance(state, dict) else None
        default = (
            (current.get("provider"), current.get("id")) if isinstance(current, dict) else None
        )
        models = []
        for entry in (listed or {}).get("models") or []:
            if isinstance(entry, dict):
                info = model_info(
                    entry, default=(entry.get("provider"), entry.get("id")) == default
                )
                if info is not None:
                    models.append(info)
        return models

    # ------------------------------------------------------------------ sessions

    def supports_no_tools(self) -> bool:
        return True

    def _session_argv(self, config: SessionConfig) -> list[str]:
        # Pi has no approvals: without tools means its own switches, no tool and no extension
        # (a project's extensions are code it would load and run).
        return [*self._argv(), *NO_TOOLS_ARGS] if config.noTools else self._argv()

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        if config.modeId:
            raise InvalidParams(f"Pi has no modes (asked for {config.modeId!r})")
        return await PiSession.start(
            self.id,
            self._session_argv(config),
            self._session_env(config),
            config,
            sink,
            launcher=launcher,
            start_timeout=self._start_timeout,
        )

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        session_file = handle.nativeHandle
        if not isinstance(session_file, str) or not session_file:
            raise NotFound("the persistence handle names no Pi session file")
        if not await asyncio.to_thread(os.path.isfile, session_file):
            raise NotFound(f"the Pi session file {session_file} is gone")
        return await PiSession.start(
            self.id,
            self._session_argv(config),
            self._session_env(config),
            config.model_copy(update={"modeId": None}),
            sink,
            launcher=launcher,
            session_file=session_file,
            start_timeout=self._start_timeout,
        )
