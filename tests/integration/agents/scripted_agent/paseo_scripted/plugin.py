"""The ``scripted`` provider: a real :class:`AgentProvider` around ``program.py``.

It exists to test the agent manager through the real daemon without a model: the program is
started through the launcher the kernel hands it, like every agent program, speaks JSON lines,
and does what its prompt says (see ``program.py``). Models ``hang``, ``crash``,
``reject`` and ``missing`` (no program at all) reproduce the start-up and model failures. It
offers two provider features (the built-in providers offer none): a ``fast`` toggle and a
``tone`` select, kept by the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from paseo_hookspecs import hookimpl
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, Unavailable
from paseo_hookspecs.events import (
    AssistantMessageItem,
    OtherDetail,
    PermissionRequest,
    PermissionRequested,
    PermissionResolution,
    ThreadStarted,
    Timeline,
    ToolCallItem,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Usage,
    UsageReported,
    WriteDetail,
)
from paseo_hookspecs.interfaces.agent import (
    AgentProvider,
    AgentSession,
    Availability,
    DraftConfig,
    EventSink,
    ModeAccess,
    ModeInfo,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
    ThinkingOption,
)
from paseo_hookspecs.process import AgentProcess, ProcessLauncher
from paseo_hookspecs.records import (
    AgentFeature,
    AgentFeatureSelect,
    AgentFeatureToggle,
    AgentSelectOption,
)

PROGRAM = Path(__file__).with_name("program.py")
MODES = ("default", "plan")
MODE_ACCESS: dict[str, ModeAccess] = {"default": "ask", "plan": "read-only"}
"""Their access levels, as a real provider declares them (the MCP caller rules compare them)."""
MODELS = ("default", "reject", "hang", "crash", "missing")
TONES = ("plain", "terse")


def features(values: dict[str, Any]) -> list[AgentFeature]:
    """The ``fast`` toggle and the ``tone`` select with ``values`` applied."""
    tone = values.get("tone")
    return [
        AgentFeatureToggle(type="toggle", id="fast", label="Fast", value=bool(values.get("fast"))),
        AgentFeatureSelect(
            type="select",
            id="tone",
            label="Tone",
            value=tone if tone in TONES else "plain",
            options=[AgentSelectOption(id=t, label=t.title()) for t in TONES],
        ),
    ]


class ScriptedSession(AgentSession):
    def __init__(
        self,
        provider_id: str,
        process: AgentProcess,
        sink: EventSink,
        session_id: str,
        config: SessionConfig,
    ) -> None:
        self._provider = provider_id
        self._process = process
        self._sink = sink
        self._session_id = session_id
        self._model = config.model or "default"
        self._mode = config.modeId or "default"
        self._features = dict(config.featureValues)
        self._turn = False
        self._pending: dict[str, dict[str, Any]] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def persistence_handle(self) -> PersistenceHandle | None:
        return PersistenceHandle(provider=self._provider, sessionId=self._session_id)

    def runtime_info(self) -> dict[str, Any]:
        return {"sessionId": self._session_id, "model": self._model, "modeId": self._mode}

    async def _emit_started(self) -> None:
        await self._sink(ThreadStarted(provider=self._provider, sessionId=self._session_id))

    async def _read(self) -> None:
        while True:
            line = await self._process.read_line()
            if line is None:
                break
            if not line:
                continue
            await self._handle(json.loads(line))
        code = await self._process.wait()
        if self._turn:
            self._turn = False
            await self._sink(
                TurnFailed(
                    provider=self._provider,
                    error=f"the scripted agent exited with code {code}",
                    diagnostic=self._process.stderr_tail().strip() or None,
                )
            )
        await self._process.terminate()

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        provider = self._provider
        if kind == "turn_started":
            await self._sink(TurnStarted(provider=provider))
        elif kind == "text":
            text = AssistantMessageItem(text=message["text"], messageId=message["messageId"])
            await self._sink(Timeline(provider=provider, item=text))
        elif kind == "tool":
            tool = ToolCallItem(
                callId=message["callId"],
                name="Write",
                status=message["status"],
                detail=WriteDetail(path=message["path"]),
            )
            await self._sink(Timeline(provider=provider, item=tool))
        elif kind == "permission":
            self._pending[message["id"]] = message
            request = PermissionRequest(
                id=message["id"],
                kind="tool",
                title=message["title"],
                toolName="Write",
                input={"path": message["path"], "content": message["content"]},
                detail=WriteDetail(path=message["path"], content=message["content"]),
            )
            await self._sink(PermissionRequested(provider=provider, request=request))
        elif kind == "usage":
            # What the turn spent so far (the daemon checks budgets against it).
            usage = Usage.model_validate(message["usage"])
            await self._sink(UsageReported(provider=provider, usage=usage))
        elif kind in ("done", "failed", "canceled"):
            self._turn = False
            self._pending.clear()
            usage = Usage.model_validate(message["usage"]) if "usage" in message else None
            if kind == "done":
                await self._sink(TurnCompleted(provider=provider, usage=usage))
            elif kind == "failed":
                await self._sink(TurnFailed(provider=provider, error=message["error"]))
            else:
                await self._sink(TurnCanceled(provider=provider, usage=usage))
        else:
            detail = OtherDetail(input=message)
            odd = ToolCallItem(callId="unknown", name="unknown", status="failed", detail=detail)
            await self._sink(Timeline(provider=provider, item=odd))

    async def prompt(self, text: str, *, message_id: str) -> None:
        if self._turn:
            raise Conflict("a turn is already running")
        if self._process.returncode is not None:
            raise Unavailable("the scripted agent is not running")
        self._turn = True
        try:
            await self._process.write_line(
                {"type": "prompt", "text": text, "messageId": message_id}
            )
        except BaseException:
            self._turn = False
            raise

    async def interrupt(self) -> None:
        if self._turn:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await self._process.write_line({"type": "interrupt"})

    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        if self._pending.pop(request_id, None) is None:
            raise NotFound(f"no pending request {request_id}")
        answer: dict[str, Any] = {"type": "permission", "id": request_id}
        if resolution.behavior == "allow":
            answer["allow"] = True
            if resolution.updatedInput:
                answer["content"] = resolution.updatedInput.get("content")
        else:
            answer["allow"] = False
            answer["message"] = resolution.message
            answer["interrupt"] = resolution.interrupt
        await self._process.write_line(answer)

    async def set_mode(self, mode_id: str) -> None:
        if mode_id not in MODES:
            raise InvalidParams(f"the scripted agent has no mode {mode_id!r}")
        self._mode = mode_id

    async def set_model(self, model: str) -> None:
        self._model = model

    def features(self) -> list[AgentFeature]:
        return features(self._features)

    async def set_feature(self, feature_id: str, value: Any) -> None:
        if feature_id == "fast" and isinstance(value, bool):
            self._features["fast"] = value
        elif feature_id == "tone" and value in TONES:
            self._features["tone"] = value
        else:
            raise InvalidParams(
                f"the scripted agent has no feature {feature_id!r} with value {value!r} "
                f"(fast: true/false, tone: {', '.join(TONES)})"
            )

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        await self._process.terminate(grace=1.0)

    def diagnostics(self) -> str:
        return self._process.stderr_tail()


class ScriptedProvider(AgentProvider):
    def __init__(
        self,
        provider_id: str = "scripted",
        label: str = "Scripted test agent",
        command: list[str] | None = None,
    ) -> None:
        self.id = provider_id
        self.label = label
        self._command = command

    async def availability(self) -> Availability:
        if self._command is not None and not await asyncio.to_thread(Path(self._command[0]).exists):
            return Availability(status="unavailable", reason=f"{self._command[0]} is not installed")
        return Availability(status="ready")

    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        return [
            ModelInfo(
                id=model,
                label=model.title(),
                default=model == "default",
                thinkingOptions=[ThinkingOption(id="low", label="Low")],
            )
            for model in MODELS
        ]

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        return [ModeInfo(id=mode, label=mode.title(), access=MODE_ACCESS[mode]) for mode in MODES]

    async def list_features(
        self, draft: DraftConfig, launcher: ProcessLauncher
    ) -> list[AgentFeature]:
        return features(draft.featureValues)

    async def _start(
        self,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
        resume: str | None,
    ) -> ScriptedSession:
        model = config.model or "default"
        argv = list(self._command or [sys.executable, "-u", str(PROGRAM)])
        if model == "missing":
            argv = ["/nonexistent/scripted-agent"]
        argv += ["--model", model]
        if resume:
            argv += ["--resume", resume]
        env = dict(config.env)
        paseo = config.mcpServers.get("paseo")
        if isinstance(paseo, dict) and isinstance(paseo.get("url"), str):
            env["PASEO_SCRIPTED_MCP_URL"] = paseo["url"]
        try:
            process = await launcher.launch(
                argv, cwd=config.cwd, env=env, provider=self.id, agent_id=config.agentId
            )
        except FileNotFoundError:
            raise Unavailable(
                f"the scripted agent program {argv[0]} is not installed; install it or pick "
                "another model"
            ) from None
        try:
            line = await process.read_line()
            if line is None:
                code = await process.wait()
                raise Unavailable(
                    f"the scripted agent exited during start-up (code {code}): "
                    f"{process.stderr_tail().strip()}"
                )
            ready = json.loads(line)
        except BaseException:
            await process.terminate(grace=0.5)
            raise
        session = ScriptedSession(self.id, process, sink, str(ready["sessionId"]), config)
        await session._emit_started()
        return session

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        return await self._start(config, sink, launcher, None)

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        return await self._start(config, sink, launcher, handle.sessionId)

    def supports_no_tools(self) -> bool:
        # The program's one tool (a write) always asks first, so a session is without tools
        # once every request is refused, which the kernel does for an internal agent: that
        # refusal is what this provider tests. A custom provider runs a program of the user's
        # choosing, which this plugin cannot vouch for.
        return self._command is None

    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        return ScriptedProvider(provider_id, label, command=overrides.get("command"))


@hookimpl
def paseo_register_providers(register: Any) -> None:
    register(ScriptedProvider())
