"""The ``codex`` provider: OpenAI's Codex CLI driven through ``codex app-server``.

The program is ``codex`` on the daemon's ``PATH`` unless a custom provider (``extends: "codex"``)
names another ``command``. Codex keeps its configuration, credentials and conversations in
``~/.codex`` of the daemon's user (or ``$CODEX_HOME``); this provider never overrides that: a
custom provider's ``env`` or the session's environment may.

Models come from Codex's ``model/list`` (reasoning efforts become thinking options), asked of a
short-lived ``codex app-server`` and cached; a custom provider's ``models`` replaces the list and
``additionalModels`` adds to it. ``disallowedTools`` has no Codex equivalent in app-server mode
and is ignored.

Modes are presets of an approval policy and a sandbox (:mod:`paseo_codex.modes`): ``auto`` (the
default: on-request approval, workspace-write sandbox), ``read-only``, ``untrusted`` (asks before
every command not known to be read-only, and before every file change) and ``full-access``
(never asks, no sandbox). Codex's ``fast_mode``/``plan_mode`` feature toggles are not offered.
"""

from __future__ import annotations

import asyncio
import os
import tomllib
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.interfaces.agent import (
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
from paseo_hookspecs.program_provider import ProgramProvider
from paseo_hookspecs.stdio_rpc import ConnectionLost, RpcError, StdioJsonRpc
from paseo_hookspecs.terminals import PROMPT_SENTINEL, TerminalProfile

from .modes import DEFAULT_MODE, MODES, NO_TOOLS, NO_TOOLS_CONFIG, ModePreset
from .session import INSTALL_HINT, CodexSession

START_TIMEOUT = 60.0
"""How long Codex may take to answer ``initialize`` (it loads a large native binary)."""

KEY_VARIABLES = ("OPENAI_API_KEY", "CODEX_API_KEY")


def _credentials_problem(env: dict[str, str]) -> str | None:
    """Why Codex would find no model credentials (it then waits at its first turn), or
    ``None``: an API key variable, a ``codex login`` (``auth.json``), or a ``config.toml``
    that picks a model provider of its own or another OpenAI base URL."""
    if any(env.get(name) for name in KEY_VARIABLES) or env.get("OPENAI_BASE_URL"):
        return None
    home = Path(env.get("CODEX_HOME") or Path(env.get("HOME") or "~") / ".codex").expanduser()
    if (home / "auth.json").is_file():
        return None
    try:
        config = tomllib.loads((home / "config.toml").read_text())
    except FileNotFoundError:
        config = {}
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return f"{home / 'config.toml'} cannot be read ({exc}): fix it"
    if config.get("model_provider") not in (None, "openai") or config.get("openai_base_url"):
        return None
    return (
        "Codex has no credentials and would wait at the first turn: run `codex login`, set "
        f"{' or '.join(KEY_VARIABLES)}, or name a model_provider with a base_url in "
        f"{home / 'config.toml'} (variables go in the daemon's environment or in "
        "agents.providers.codex.env)"
    )


def _from_codex(model: dict[str, Any]) -> ModelInfo | None:
    model_id = model.get("model") or model.get("id")
    if not isinstance(model_id, str):
        return None
    efforts = [
        e.get("reasoningEffort")
        for e in model.get("supportedReasoningEfforts") or []
        if isinstance(e, dict)
    ]
    return ModelInfo(
        id=model_id,
        label=str(model.get("displayName") or model_id),
        default=bool(model.get("isDefault")),
        thinkingOptions=[
            ThinkingOption(id=effort, label=effort.capitalize())
            for effort in efforts
            if isinstance(effort, str) and effort
        ],
    )


class CodexProvider(ProgramProvider):
    """Runs ``codex app-server`` sessions."""

    id = "codex"
    label = "Codex"
    default_command = ("codex",)
    default_start_timeout = START_TIMEOUT

    # ------------------------------------------------------------------ the program

    def _argv(self, config: SessionConfig | None = None) -> list[str]:
        program = self._program()
        if program is None:
            raise Unavailable(
                f"the Codex program {self._command[0]!r} was not found. {INSTALL_HINT}"
            )
        argv = [program, *self._command[1:], "app-server"]
        if config is not None and config.noTools:
            for override in NO_TOOLS_CONFIG:
                argv += ["-c", override]
        return argv

    def supports_no_tools(self) -> bool:
        return True

    def _session_env(self, config: SessionConfig | None) -> dict[str, str]:
        return {**self._env, **(config.env if config else {})}

    async def availability(self) -> Availability:
        if self._program() is None:
            return Availability(
                status="unavailable",
                reason=f"the Codex program {self._command[0]!r} was not found. {INSTALL_HINT}",
            )
        problem = await asyncio.to_thread(_credentials_problem, {**os.environ, **self._env})
        if problem is not None:
            return Availability(status="unavailable", reason=problem)
        return Availability(status="ready")

    # ------------------------------------------------------------------ models and modes

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        return [preset.info for preset in MODES.values()]

    async def discover_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        argv = self._argv()

        async def ignore(*_args: Any) -> None:
            return None

        try:
            # Listing models reads no project: any existing directory will do.
            process = await launcher.launch(argv, cwd="/", env=self._env, provider=self.id)
        except (FileNotFoundError, PermissionError) as exc:
            raise Unavailable(f"cannot run {argv[0]!r}: {exc}. {INSTALL_HINT}") from exc
        conn = StdioJsonRpc(
            process,
            on_notification=ignore,
            on_request=ignore,
            on_closed=ignore,
            jsonrpc_field=False,
            program="the Codex process",
        )
        conn.start()
        models: list[ModelInfo] = []
        try:
            await conn.request(
                "initialize",
                {"clientInfo": {"name": "paseo", "version": "0"}},
                timeout=self._start_timeout,
            )
            await conn.notify("initialized")
            cursor: str | None = None
            for _page in range(20):
                params: dict[str, Any] = {"cursor": cursor} if cursor else {}
                result = await conn.request("model/list", params, timeout=30.0)
                for entry in result.get("data") or []:
                    info = _from_codex(entry) if isinstance(entry, dict) else None
                    if info is not None:
                        models.append(info)
                cursor = result.get("nextCursor")
                if not cursor:
                    break
        except (ConnectionLost, TimeoutError, RpcError) as exc:
            tail = process.stderr_tail(1000).strip()
            raise Unavailable(
                f"Codex could not list its models ({exc or 'timed out'}): {tail}"
            ) from exc
        finally:
            await conn.stop()
            await process.terminate()
        return models

    # ------------------------------------------------------------------ sessions

    def _mode(self, mode_id: str | None, *, no_tools: bool = False) -> ModePreset:
        if no_tools:
            return NO_TOOLS
        preset = MODES.get(mode_id or DEFAULT_MODE)
        if preset is None:
            raise InvalidParams(f"Codex has no mode {mode_id!r} (modes: {', '.join(MODES)})")
        return preset

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        mode = self._mode(config.modeId, no_tools=config.noTools)
        return await CodexSession.start(
            self.id,
            self._argv(config),
            self._session_env(config),
            config,
            sink,
            launcher=launcher,
            mode=mode,
            start_timeout=self._start_timeout,
        )

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        thread_id = (
            handle.nativeHandle if isinstance(handle.nativeHandle, str) else handle.sessionId
        )
        if not thread_id:
            raise InvalidParams("the persistence handle names no Codex thread")
        mode = self._mode(config.modeId, no_tools=config.noTools)
        return await CodexSession.start(
            self.id,
            self._argv(config),
            self._session_env(config),
            config,
            sink,
            launcher=launcher,
            mode=mode,
            start_timeout=self._start_timeout,
            resume_thread=thread_id,
        )

    def terminal_profile(self) -> TerminalProfile:
        """The Codex TUI, with the typed prompt as its first message."""
        program, *rest = self._command
        return TerminalProfile(
            id=self.id,
            name=self.label,
            command=program,
            args=[*rest, PROMPT_SENTINEL],
            icon="codex",
        )
