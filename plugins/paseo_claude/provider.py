"""The ``claude`` provider: Claude Code's CLI as a long-lived stream-json process per session."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.interfaces.agent import (
    AgentProvider,
    AgentSession,
    Availability,
    EventSink,
    ModeInfo,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher
from paseo_hookspecs.terminals import PROMPT_SENTINEL, TerminalProfile

from paseo_claude.modes import MODES, THINKING_OPTIONS, check_mode, check_thinking
from paseo_claude.protocol import LaunchSpec
from paseo_claude.session import ClaudeSession

INSTALL_HINT = "install @anthropic-ai/claude-code (npm i -g @anthropic-ai/claude-code)"

BASE_ARGS = (
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
    "--include-partial-messages",
)
"""The daemon-grade mode: JSON lines both ways, permission prompts over stdio, token deltas."""

NO_TOOLS_ARGS = (
    "--tools",
    "",
    "--strict-mcp-config",
    "--setting-sources",
    "",
    "--permission-mode",
    "dontAsk",
)
"""``SessionConfig.noTools``: no built-in tool, no MCP server but ``--mcp-config``'s (none),
no settings file of the user or the project (their hooks and permission rules), and a mode
that refuses whatever was not allowed beforehand instead of asking."""

DEFAULT_MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        id="claude-opus-5-5", label="Opus 5.5", default=True, thinkingOptions=THINKING_OPTIONS
    ),
    ModelInfo(id="claude-fable-5-2", label="Fable 5.2", thinkingOptions=THINKING_OPTIONS),
    ModelInfo(id="claude-sonnet-5-5", label="Sonnet 5.5", thinkingOptions=THINKING_OPTIONS),
    ModelInfo(id="claude-haiku-5-5", label="Haiku 5.5", thinkingOptions=THINKING_OPTIONS),
)
"""The models Claude Code 2.1.332 offers (its ``initialize`` answer lists the same)."""

STARTUP_TIMEOUT = 60.0
"""Bound on spawning Claude Code and its ``initialize`` answer (a cold start loads ~200 MB)."""

MCP_CONNECT_TIMEOUT_MS = "60000"
"""``MCP_TIMEOUT`` given to Claude Code when it gets MCP servers and no value is set: how long
it waits for a server to connect before the first turn (its own default is ~25-30 s, after
which the turn runs without that server's tools; a loaded machine can answer later than that,
and Claude Code ignores values above 60 s)."""


def _model_infos(raw: Any, what: str) -> list[ModelInfo]:
    if not isinstance(raw, list):
        raise InvalidParams(f"{what} must be a list of model ids or {{id, label}} objects")
    models = []
    for entry in raw:
        if isinstance(entry, str):
            models.append(ModelInfo(id=entry, label=entry, thinkingOptions=THINKING_OPTIONS))
        elif isinstance(entry, Mapping) and isinstance(entry.get("id"), str):
            data = {"label": entry["id"], "thinkingOptions": THINKING_OPTIONS, **entry}
            models.append(ModelInfo.model_validate(data))
        else:
            raise InvalidParams(f"{what}: {entry!r} is neither a model id nor {{id, label}}")
    return models


def _command(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        argv = shlex.split(raw)
    elif isinstance(raw, list) and all(isinstance(part, str) for part in raw):
        argv = list(raw)
    else:
        raise InvalidParams("command must be a string or a list of strings")
    if not argv:
        raise InvalidParams("command must not be empty")
    return tuple(argv)


@dataclass(frozen=True)
class ClaudeOptions:
    """What a custom provider (``agents.providers.<id>``) may change."""

    command: tuple[str, ...] = ("claude",)
    env: Mapping[str, str] = field(default_factory=dict)
    models: tuple[ModelInfo, ...] = DEFAULT_MODELS
    disallowed_tools: tuple[str, ...] = ()
    startup_timeout: float = STARTUP_TIMEOUT

    def with_overrides(self, overrides: Mapping[str, Any]) -> ClaudeOptions:
        """These options with ``command``, ``env``, ``models``, ``additionalModels`` and
        ``disallowedTools`` from config applied; ``InvalidParams`` for malformed values."""
        options = self
        if overrides.get("command") is not None:
            options = replace(options, command=_command(overrides["command"]))
        if overrides.get("env") is not None:
            env = overrides["env"]
            if not isinstance(env, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in env.items()
            ):
                raise InvalidParams("env must map names to string values")
            options = replace(options, env={**options.env, **env})
        if overrides.get("models") is not None:
            options = replace(options, models=tuple(_model_infos(overrides["models"], "models")))
        if overrides.get("additionalModels") is not None:
            extra = _model_infos(overrides["additionalModels"], "additionalModels")
            by_id = {model.id: model for model in options.models}
            by_id.update({model.id: model for model in extra})
            options = replace(options, models=tuple(by_id.values()))
        if overrides.get("disallowedTools") is not None:
            tools = overrides["disallowedTools"]
            if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
                raise InvalidParams("disallowedTools must be a list of tool names")
            options = replace(options, disallowed_tools=tuple(tools))
        return options


class ClaudeProvider(AgentProvider):
    """Claude Code (``claude``) driven through its stream-json control protocol."""

    def __init__(
        self,
        provider_id: str = "claude",
        label: str = "Claude Code",
        options: ClaudeOptions | None = None,
    ) -> None:
        self.id = provider_id
        self.label = label
        self.options = options or ClaudeOptions()

    # ------------------------------------------------------------------ discovery

    def _search_path(self) -> str | None:
        return self.options.env.get("PATH") or os.environ.get("PATH")

    def resolve_command(self) -> list[str] | None:
        """The argv prefix that runs Claude Code, or ``None`` when the program is not found."""
        program, *rest = self.options.command
        found = shutil.which(program, path=self._search_path())
        return [found, *rest] if found else None

    def _missing(self) -> str:
        program = self.options.command[0]
        return (
            f"the Claude Code program {program!r} was not found; {INSTALL_HINT} "
            f"or set agents.providers.{self.id}.command in config.json"
        )

    async def availability(self) -> Availability:
        if self.resolve_command() is None:
            return Availability(status="unavailable", reason=self._missing())
        return Availability(status="ready")

    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        return list(self.options.models)

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        return list(MODES)

    # ------------------------------------------------------------------ sessions

    def supports_no_tools(self) -> bool:
        return True

    def launch_spec(
        self, config: SessionConfig, *, session_id: str | None = None, resume: str | None = None
    ) -> LaunchSpec:
        """The argv and environment of one Claude Code process for ``config``.

        A new conversation gets a preset ``--session-id`` (so its id is known before the first
        turn); ``resume`` continues an existing one with ``--resume``.
        """
        command = self.resolve_command()
        if command is None:
            raise Unavailable(self._missing())
        mode = config.modeId or "default"
        check_mode(mode)
        thinking = config.thinkingOptionId
        if thinking is not None:
            check_thinking(thinking)
        env = {**self.options.env, **config.env}
        # As root Claude Code refuses --allow-dangerously-skip-permissions unless it is told it
        # runs in a sandbox; offering the flag then would make it exit at start-up.
        bypass_allowed = os.geteuid() != 0 or bool(
            env.get("IS_SANDBOX", os.environ.get("IS_SANDBOX"))
        )
        if mode == "bypassPermissions" and not bypass_allowed:
            raise Unavailable(
                "as root Claude Code runs in bypassPermissions only when the agent's environment "
                f"holds IS_SANDBOX=1 (agents.providers.{self.id}.env); pick another mode or set it"
            )
        argv = [*command, *BASE_ARGS]
        if config.noTools:
            argv += NO_TOOLS_ARGS
            bypass_allowed = False
        elif bypass_allowed:
            argv.append("--allow-dangerously-skip-permissions")
        if mode != "default" and not config.noTools:
            argv += ["--permission-mode", mode]
        if config.model:
            argv += ["--model", config.model]
        if thinking:
            argv += ["--effort", thinking]
        if config.systemPrompt:
            flag = (
                "--system-prompt"
                if config.extra.get("replaceSystemPrompt")
                else "--append-system-prompt"
            )
            argv += [flag, config.systemPrompt]
        schema = config.extra.get("outputSchema")
        if isinstance(schema, dict):
            # Structured output: every turn's final answer is a JSON document of this schema.
            argv.append("--json-schema=" + json.dumps(schema))
        if config.mcpServers:
            # The = form: the option is variadic and would swallow the arguments after it.
            argv.append("--mcp-config=" + json.dumps({"mcpServers": config.mcpServers}))
            if "MCP_TIMEOUT" not in env and "MCP_TIMEOUT" not in os.environ:
                env["MCP_TIMEOUT"] = MCP_CONNECT_TIMEOUT_MS
        if self.options.disallowed_tools:
            argv.append("--disallowedTools=" + ",".join(self.options.disallowed_tools))
        if resume is not None:
            argv += ["--resume", resume]
            session = resume
        else:
            session = session_id or str(uuid.uuid4())
            argv += ["--session-id", session]
        return LaunchSpec(
            provider_id=self.id,
            argv=argv,
            env=env,
            session_id=session,
            resumed=resume is not None,
            model=config.model,
            mode_id=mode,
            thinking=thinking,
            bypass_allowed=bypass_allowed,
            startup_timeout=self.options.startup_timeout,
        )

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        return await ClaudeSession.start(self.launch_spec(config), config, sink, launcher)

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        session_id = handle.nativeHandle if isinstance(handle.nativeHandle, str) else None
        session_id = session_id or handle.sessionId
        if not session_id:
            raise InvalidParams("the persistence handle names no Claude Code session")
        spec = self.launch_spec(config, resume=session_id)
        return await ClaudeSession.start(spec, config, sink, launcher)

    def terminal_profile(self) -> TerminalProfile:
        """Claude Code interactive, with the typed prompt as its first message."""
        program, *rest = self.options.command
        return TerminalProfile(
            id=self.id,
            name=self.label,
            command=program,
            args=[*rest, PROMPT_SENTINEL],
            icon="claude",
        )

    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        return ClaudeProvider(provider_id, label, self.options.with_overrides(overrides))
