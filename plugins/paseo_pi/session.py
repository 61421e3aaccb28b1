"""One Pi conversation: a ``pi --mode rpc`` process and its session file.

Start-up: the program is started (``--session <file>`` to resume), then ``get_state`` names the
session (``sessionId``, ``sessionFile``) and ``thread_started`` follows. Per prompt: ``prompt``
(accepted → ``turn_started`` was already emitted), then Pi streams ``message_update``
(``text_delta`` / ``thinking_delta``), ``tool_execution_start`` / ``_end`` and finally
``agent_end``, which ends the turn: canceled when an interrupt was asked for or the last
assistant message stopped as ``aborted``, failed when it stopped as ``error``, else completed.

Pi has no modes and never asks for permission: its tools run as soon as the model calls them,
and the timeline shows each call. ``runtime_info`` says so (``permissionPrompts: false``) so
clients do not wait for a request that cannot come.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable
from paseo_hookspecs.events import (
    AgentEvent,
    AssistantMessageItem,
    ErrorItem,
    PermissionResolution,
    ReasoningItem,
    ThreadStarted,
    Timeline,
    TimelineItem,
    ToolStatus,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    UserMessageItem,
)
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    EventSink,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.ordered_events import OrderedEvents
from paseo_hookspecs.process import AgentProcess, ProcessLauncher
from paseo_hookspecs.turns import Turn, TurnLedger

from .mapping import THINKING_LEVELS, last_assistant, model_id, result_text, tool_item, usage_of
from .rpc import PiConnection, PiGone, PiRefused

log = logging.getLogger("paseo_pi.session")

START_TIMEOUT = 60.0
"""Seconds for the first ``get_state`` answer (Node loads the agent and its extensions)."""
REQUEST_TIMEOUT = 30.0
"""Seconds for any other command (Pi answers them at once)."""
ABORT_GRACE = 10.0
"""Seconds Pi gets to end an aborted run before the session ends the turn on its own."""

INSTALL_HINT = (
    "Install Pi with `npm install -g @mariozechner/pi-coding-agent@0.73.1` (or set "
    "`agents.providers.<id>.command` in config.json to its path)."
)


class PiSession(AgentSession):
    """A running ``pi --mode rpc``. Create with :meth:`start`."""

    def __init__(self, provider_id: str, process: AgentProcess, sink: EventSink) -> None:
        self._provider = provider_id
        self._process = process
        self._events = OrderedEvents(sink, name="pi-events")
        self._conn = PiConnection(process, self._on_event, self._on_closed)
        self._turns = TurnLedger()
        self._session_id: str | None = None
        self._session_file: str | None = None
        self._model: str | None = None
        self._thinking: str | None = None
        self._message_count = 0
        self._tools: dict[str, tuple[str, Any]] = {}
        self._closed = False

    # ------------------------------------------------------------------ start-up

    @classmethod
    async def start(
        cls,
        provider_id: str,
        argv: Sequence[str],
        env: dict[str, str],
        config: SessionConfig,
        sink: EventSink,
        *,
        launcher: ProcessLauncher,
        session_file: str | None = None,
        start_timeout: float = START_TIMEOUT,
    ) -> PiSession:
        command = [*argv, "--mode", "rpc"]
        if session_file is not None:
            command += ["--session", session_file]
        if config.model:
            command += ["--model", config.model]
        if config.thinkingOptionId:
            command += ["--thinking", _thinking(config.thinkingOptionId)]
        if config.systemPrompt:
            command += ["--append-system-prompt", config.systemPrompt]
        try:
            process = await launcher.launch(
                command, cwd=config.cwd, env=env, provider=provider_id, agent_id=config.agentId
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise Unavailable(f"cannot run Pi {argv[0]!r}: {exc}. {INSTALL_HINT}") from exc
        session = cls(provider_id, process, sink)
        try:
            await session._read_state(start_timeout)
        except BaseException:
            await session.close()
            raise
        assert session._session_id is not None
        await session._emit(ThreadStarted(provider=provider_id, sessionId=session._session_id))
        return session

    async def _read_state(self, limit: float) -> None:
        try:
            state = await self._conn.request("get_state", limit)
        except (PiGone, TimeoutError) as exc:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.wait(), 5.0)
            tail = self._process.stderr_tail(2000).strip() or "(none)"
            what = "exited" if isinstance(exc, PiGone) else f"did not answer within {limit:.0f}s"
            raise Unavailable(f"Pi {what} at start-up; its error output: {tail}") from None
        except PiRefused as exc:
            raise Unavailable(f"Pi refused to report its state: {exc}") from None
        if not isinstance(state, dict) or not isinstance(state.get("sessionId"), str):
            raise Unavailable("Pi reported no session id at start-up (is it 0.73 or newer?)")
        self._session_id = state["sessionId"]
        file = state.get("sessionFile")
        self._session_file = file if isinstance(file, str) else None
        self._model = model_id(state.get("model"))
        level = state.get("thinkingLevel")
        self._thinking = level if isinstance(level, str) else None

    # ------------------------------------------------------------------ the contract

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def persistence_handle(self) -> PersistenceHandle | None:
        if self._session_id is None:
            return None
        return PersistenceHandle(
            provider=self._provider, sessionId=self._session_id, nativeHandle=self._session_file
        )

    def runtime_info(self) -> dict[str, Any]:
        return {
            "sessionId": self._session_id,
            "model": self._model,
            "thinkingOptionId": self._thinking,
            "sessionFile": self._session_file,
            # Pi runs tools without asking: nobody should wait for a permission request.
            "permissionPrompts": False,
        }

    def diagnostics(self) -> str:
        return self._process.stderr_tail()

    async def prompt(self, text: str, *, message_id: str) -> None:
        if self._closed or self._conn.closed:
            raise Unavailable(f"the Pi process has exited{self._stderr_hint()}")
        turn = self._turns.begin()
        self._tools.clear()
        await self._emit(TurnStarted(provider=self._provider, turnId=str(turn.number)))
        await self._emit_item(UserMessageItem(text=text, messageId=message_id))
        try:
            await self._conn.request("prompt", REQUEST_TIMEOUT, message=text)
        except PiRefused as exc:
            await self._finish(
                turn,
                TurnFailed(provider=self._provider, error=f"Pi refused the prompt: {exc}"),
            )
        except TimeoutError:
            await self._finish(
                turn,
                TurnFailed(provider=self._provider, error="Pi did not accept the prompt in time"),
            )
        except PiGone:
            return  # _on_closed fails the turn

    async def interrupt(self) -> None:
        turn = self._turns.current
        if turn is None or turn.finished:
            return
        turn.cancel_requested = True
        with contextlib.suppress(PiGone, PiRefused, TimeoutError):
            await self._conn.request("abort", REQUEST_TIMEOUT)
        try:
            await asyncio.wait_for(turn.done.wait(), ABORT_GRACE)
        except TimeoutError:
            log.warning("Pi did not end an aborted run within %.0f s", ABORT_GRACE)
            await self._finish(turn, TurnCanceled(provider=self._provider))
        await self._events.flush()

    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        raise NotFound(f"no pending permission request {request_id!r} (Pi never asks for one)")

    async def set_model(self, model: str) -> None:
        provider, sep, ident = model.partition("/")
        if not sep or not provider or not ident:
            raise InvalidParams(f"a Pi model is named provider/id, not {model!r}")
        try:
            data = await self._conn.request(
                "set_model", REQUEST_TIMEOUT, provider=provider, modelId=ident
            )
        except PiRefused as exc:
            raise InvalidParams(f"Pi refused the model {model!r}: {exc}") from None
        except (PiGone, TimeoutError) as exc:
            raise Unavailable(f"Pi did not confirm the model {model!r}") from exc
        self._model = model_id(data) or model

    async def set_thinking(self, option_id: str) -> None:
        level = _thinking(option_id)
        try:
            await self._conn.request("set_thinking_level", REQUEST_TIMEOUT, level=level)
        except PiRefused as exc:
            raise InvalidParams(f"Pi refused the thinking level {option_id!r}: {exc}") from None
        except (PiGone, TimeoutError) as exc:
            raise Unavailable(f"Pi did not confirm the thinking level {option_id!r}") from exc
        self._thinking = level

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        turn = self._turns.current
        if turn is not None and not turn.finished:
            await self._finish(turn, TurnCanceled(provider=self._provider, reason="closed"))
        await self._process.terminate()
        await self._conn.stop()
        await self._events.stop()

    # ------------------------------------------------------------------ Pi's events

    async def _on_closed(self) -> None:
        if self._closed:
            return
        code = await self._process.terminate(grace=1.0)
        turn = self._turns.current
        if turn is not None and not turn.finished:
            await self._finish(
                turn,
                TurnFailed(
                    provider=self._provider,
                    error=f"Pi exited during the turn (exit code {code})",
                    code="process_exited",
                    diagnostic=self._process.stderr_tail() or None,
                ),
            )

    async def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        turn = self._turns.current
        if turn is None or turn.finished:
            return  # nothing of Pi's outside a turn belongs in the timeline
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                self._message_count += 1
        elif kind == "message_update":
            await self._on_delta(turn, event.get("assistantMessageEvent"))
        elif kind == "tool_execution_start":
            call_id, name = str(event.get("toolCallId")), str(event.get("toolName"))
            self._tools[call_id] = (name, event.get("args"))
            await self._emit_item(tool_item(call_id, name, event.get("args"), "running"))
        elif kind == "tool_execution_end":
            call_id = str(event.get("toolCallId"))
            name, args = self._tools.pop(call_id, (str(event.get("toolName")), None))
            status: ToolStatus = "failed" if event.get("isError") else "completed"
            output = result_text(event.get("result"))
            await self._emit_item(tool_item(call_id, name, args, status, output))
        elif kind == "agent_end":
            await self._finish(turn, self._turn_end(turn, event.get("messages")))

    async def _on_delta(self, turn: Turn, delta: Any) -> None:
        if not isinstance(delta, dict) or not isinstance(delta.get("delta"), str):
            return
        text = delta["delta"]
        if not text:
            return
        message_id = f"pi-{turn.number}-{self._message_count}"
        if delta.get("type") == "text_delta":
            await self._emit_item(AssistantMessageItem(text=text, messageId=message_id))
        elif delta.get("type") == "thinking_delta":
            await self._emit_item(ReasoningItem(text=text, messageId=f"{message_id}-thinking"))

    def _turn_end(self, turn: Turn, messages: Any) -> AgentEvent:
        last = last_assistant(messages) or {}
        stop = last.get("stopReason")
        if turn.cancel_requested or stop == "aborted":
            return TurnCanceled(provider=self._provider)
        if stop == "error":
            detail = last.get("errorMessage")
            return TurnFailed(
                provider=self._provider,
                error=f"the model call failed: {detail or 'unknown error'}",
                code="model_error",
                diagnostic=self._process.stderr_tail() or None,
            )
        return TurnCompleted(provider=self._provider, usage=usage_of(messages))

    async def _finish(self, turn: Turn, event: AgentEvent) -> None:
        if self._turns.finish(turn) is None:
            return
        try:
            if event.type != "turn_completed":
                left: ToolStatus = "canceled" if event.type == "turn_canceled" else "failed"
                for call_id, (name, args) in self._tools.items():
                    await self._emit_item(tool_item(call_id, name, args, left))
                self._tools.clear()
            if isinstance(event, TurnFailed):
                await self._emit_item(ErrorItem(message=event.error))
            await self._emit(event)
        finally:
            self._turns.settle(turn)

    # ------------------------------------------------------------------ delivery

    async def _emit_item(self, item: TimelineItem) -> None:
        await self._emit(Timeline(provider=self._provider, item=item))

    async def _emit(self, event: AgentEvent) -> None:
        await self._events.put(event)

    def _stderr_hint(self) -> str:
        tail = self._process.stderr_tail(500).strip()
        return f"; its error output: {tail}" if tail else ""


def _thinking(option_id: str) -> str:
    if option_id != "off" and option_id not in THINKING_LEVELS:
        raise InvalidParams(
            f"unknown Pi thinking level {option_id!r} (levels: off, {', '.join(THINKING_LEVELS)})"
        )
    return option_id
