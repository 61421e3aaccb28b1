"""One Codex conversation: a ``codex app-server`` process driving one thread.

Lifecycle: ``initialize`` → ``initialized`` → ``thread/start`` (or ``thread/resume``) once, then
one ``turn/start`` per prompt. Mode, model and thinking changes are sent with the next
``turn/start`` (Codex applies its ``approvalPolicy``, ``sandboxPolicy``, ``model`` and ``effort``
overrides to that turn and the ones after it).

Event choices, explicit because providers differ:

- ``user_message``: Codex reports the user's input as a ``userMessage`` item, so this provider
  emits it (on ``item/completed``), with ``messageId`` set to the client's message id (passed as
  ``clientUserMessageId`` and echoed back as the item's ``clientId``). An agent manager that
  records prompts itself recognises the echo by that id.
- ``thread_started`` is emitted once the ``thread/start``/``thread/resume`` answer names the
  thread; ``turn_started`` on ``turn/started``; a turn ends with exactly one of
  ``turn_completed`` (usage = the turn's share of Codex's thread token totals),
  ``turn_canceled`` (status ``interrupted``, or the session closed mid-turn) or ``turn_failed``
  (status ``failed``, or the process died mid-turn, with its stderr tail as ``diagnostic``).
- ``permission_resolved`` is emitted by this session when a request is answered through
  :meth:`CodexSession.respond_permission`, and also when Codex withdraws a request nobody
  answered (an interrupt clears pending approvals: ``serverRequest/resolved``), as a deny.
- Approval answers: allow → ``accept``, deny → ``decline``, deny and interrupt → ``cancel``
  (Codex's ``CommandExecutionApprovalDecision``/``FileChangeApprovalDecision`` enums of the
  pinned version). Codex cannot run an edited command, so ``updatedInput`` is ignored there; for
  ``item/tool/requestUserInput`` it carries the ``answers``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Sequence
from typing import Any

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable
from paseo_hookspecs.events import (
    AgentEvent,
    DenyResolution,
    ErrorItem,
    PermissionRequested,
    PermissionResolution,
    PermissionResolved,
    ThreadStarted,
    Timeline,
    TimelineItem,
    ToolStatus,
    TurnCanceled,
    TurnFailed,
    TurnStarted,
)
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    EventSink,
    PersistenceHandle,
    PromptImage,
    SessionConfig,
)
from paseo_hookspecs.process import AgentProcess, ProcessLauncher
from paseo_hookspecs.stdio_rpc import (
    METHOD_NOT_FOUND,
    ConnectionLost,
    RpcError,
    StdioJsonRpc,
    host_version,
)

from .history import READ_TIMEOUT, thread_messages
from .mapping import ItemMapper, as_dict
from .modes import ModePreset
from .requests import (
    APPROVALS,
    PERMISSIONS,
    QUESTIONS,
    answer,
    codex_mcp_servers,
    permission_request,
)
from .turns import PendingRequests, TurnSettings, TurnState

log = logging.getLogger("paseo_codex.session")

REQUEST_TIMEOUT = 30.0
"""Bound on any request after start-up (Codex answers them in milliseconds)."""

INSTALL_HINT = (
    "Install the Codex CLI with `npm install -g @openai/codex` (or set "
    "`agents.providers.<id>.command` in config.json to its path)."
)


class CodexSession(AgentSession):
    """A running ``codex app-server`` and its thread. Create with :meth:`start`."""

    def __init__(
        self,
        provider_id: str,
        process: AgentProcess,
        config: SessionConfig,
        sink: EventSink,
        *,
        mode: ModePreset,
    ) -> None:
        self._provider = provider_id
        self._process = process
        self._config = config
        self._sink = sink
        self._settings = TurnSettings(mode, config.model, config.thinkingOptionId)
        schema = config.extra.get("outputSchema")
        self._output_schema: dict[str, Any] | None = schema if isinstance(schema, dict) else None
        """Structured output: each turn's final message is a JSON document of this schema."""
        self._thread_id: str | None = None
        self._mapper = ItemMapper()
        self._permissions = PendingRequests()
        self._turn = TurnState()
        self._emit_lock = asyncio.Lock()
        self._closing = False
        self._closed = False
        self._conn = StdioJsonRpc(
            process,
            on_notification=self._on_notification,
            on_request=self._on_request,
            on_closed=self._on_closed,
            jsonrpc_field=False,
            program="the Codex process",
        )
        self._conn.start()

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
        mode: ModePreset,
        start_timeout: float,
        resume_thread: str | None = None,
    ) -> CodexSession:
        """Spawn Codex, handshake, and start (or resume) the thread."""
        if not await asyncio.to_thread(os.path.isdir, config.cwd):
            raise InvalidParams(f"the working directory {config.cwd} does not exist")
        try:
            process = await launcher.launch(
                argv, cwd=config.cwd, env=env, provider=provider_id, agent_id=config.agentId
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise Unavailable(
                f"cannot run the Codex program {argv[0]!r}: {exc.strerror or exc}. {INSTALL_HINT}"
            ) from exc
        session = cls(provider_id, process, config, sink, mode=mode)
        try:
            await session._handshake(start_timeout)
            if resume_thread is None:
                await session._start_thread(start_timeout)
            else:
                await session._resume_thread(resume_thread, start_timeout)
        except BaseException:
            await session.close()
            raise
        return session

    async def _startup_failure(self, what: str) -> Unavailable:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._process.wait(), 5.0)
        code = self._process.returncode
        tail = self._process.stderr_tail(2000).strip()
        exited = f"Codex exited during {what}" + (
            f" (exit code {code})" if code is not None else ""
        )
        return Unavailable(
            f"{exited}; its error output: {tail or '(none)'}",
            data={"stderr": tail, "exitCode": code},
        )

    async def _handshake(self, limit: float) -> None:
        params = {
            "clientInfo": {"name": "paseo", "title": "Paseo", "version": host_version()},
        }
        try:
            await self._conn.request("initialize", params, timeout=limit)
        except ConnectionLost:
            raise await self._startup_failure("start-up") from None
        except TimeoutError:
            raise Unavailable(
                f"Codex did not answer `initialize` within {limit:.0f}s; its error output: "
                f"{self._process.stderr_tail(2000).strip() or '(none)'}"
            ) from None
        except RpcError as exc:
            raise Unavailable(f"Codex refused to initialize: {exc.message}") from exc
        await self._conn.notify("initialized")

    def _thread_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "cwd": self._config.cwd,
            "approvalPolicy": self._settings.mode.approval_policy,
            "sandbox": self._settings.mode.sandbox,
        }
        if self._settings.model:
            params["model"] = self._settings.model
        if self._config.systemPrompt:
            # Developer instructions add to Codex's own base prompt instead of replacing it.
            params["developerInstructions"] = self._config.systemPrompt
        if self._config.mcpServers:
            params["config"] = {"mcp_servers": codex_mcp_servers(self._config.mcpServers)}
        return params

    async def _start_thread(self, limit: float) -> None:
        try:
            result = await self._conn.request("thread/start", self._thread_params(), timeout=limit)
        except ConnectionLost:
            raise await self._startup_failure("thread start") from None
        except TimeoutError:
            raise Unavailable(f"Codex did not start a thread within {limit:.0f}s") from None
        except RpcError as exc:
            raise Unavailable(f"Codex refused to start a thread: {exc.message}") from exc
        await self._thread_ready(result)

    async def _resume_thread(self, thread_id: str, limit: float) -> None:
        params = self._thread_params()
        # Paseo keeps its own timeline: skip Codex's (deprecated) full-history hydration.
        params.update({"threadId": thread_id, "excludeTurns": True})
        try:
            result = await self._conn.request("thread/resume", params, timeout=limit)
        except ConnectionLost:
            raise await self._startup_failure("resume") from None
        except TimeoutError:
            raise Unavailable(f"Codex did not resume the thread within {limit:.0f}s") from None
        except RpcError as exc:
            if "no rollout" in exc.message or "invalid thread id" in exc.message:
                raise NotFound(
                    f"Codex has no conversation {thread_id} in its CODEX_HOME: {exc.message}"
                ) from exc
            raise Unavailable(f"Codex could not resume thread {thread_id}: {exc.message}") from exc
        await self._thread_ready(result)

    async def _thread_ready(self, result: Any) -> None:
        result = result if isinstance(result, dict) else {}
        thread = as_dict(result.get("thread"))
        thread_id = thread.get("id")
        if not isinstance(thread_id, str):
            raise Unavailable("Codex answered without a thread id")
        self._thread_id = thread_id
        self._settings.thread_ready(result)
        await self._emit(ThreadStarted(provider=self._provider, sessionId=thread_id))

    # ------------------------------------------------------------------ AgentSession

    @property
    def session_id(self) -> str | None:
        return self._thread_id

    def persistence_handle(self) -> PersistenceHandle | None:
        if self._thread_id is None:
            return None
        return PersistenceHandle(
            provider=self._provider, sessionId=self._thread_id, nativeHandle=self._thread_id
        )

    async def history(self) -> list[TimelineItem] | None:
        if self._thread_id is None:
            return None
        params = {"threadId": self._thread_id, "includeTurns": True}
        try:
            result = await self._conn.request("thread/read", params, timeout=READ_TIMEOUT)
        except (RpcError, ConnectionLost, TimeoutError):
            return None  # no history to refill from; the conversation itself still resumes
        return thread_messages(result)

    def runtime_info(self) -> dict[str, Any]:
        return {
            "sessionId": self._thread_id,
            "model": self._settings.model,
            "modeId": self._settings.mode.info.id,
            "thinkingOptionId": self._settings.effort,
            "cwd": self._config.cwd,
            "pid": self._process.pid,
        }

    def diagnostics(self) -> str:
        return self._process.stderr_tail()

    async def prompt(self, text: str, *, message_id: str) -> None:
        await self._prompt([{"type": "text", "text": text}], message_id)

    async def prompt_with_images(
        self, text: str, images: list[PromptImage], *, message_id: str
    ) -> None:
        # Codex user input takes an image as a URL; a data URL carries the bytes themselves.
        urls = [f"data:{image.mediaType};base64,{image.data}" for image in images]
        await self._prompt(
            [{"type": "text", "text": text}, *({"type": "image", "url": url} for url in urls)],
            message_id,
        )

    async def _prompt(self, user_input: list[dict[str, Any]], message_id: str) -> None:
        if self._closed or self._conn.closed:
            raise Unavailable("the Codex process has exited; resume the agent to continue")
        self._turn.begin()  # Conflict while a turn runs
        params: dict[str, Any] = {
            "threadId": self._thread_id,
            "input": user_input,
            "clientUserMessageId": message_id,
        }
        if self._output_schema is not None:
            # A per-turn setting (Codex keeps none for the thread): sent with every turn.
            params["outputSchema"] = self._output_schema
        changed = self._settings.changed()
        params.update(changed)
        try:
            result = await self._conn.request("turn/start", params, timeout=REQUEST_TIMEOUT)
        except RpcError as exc:
            self._turn.refused()
            await self._emit(
                TurnFailed(
                    provider=self._provider,
                    error=f"Codex refused the prompt: {exc.message}",
                    code="rejected",
                )
            )
            return
        except ConnectionLost:
            # The turn stays marked running: the close handler fails it, with Codex's stderr.
            return
        except TimeoutError:
            self._turn.refused()
            raise Unavailable(
                f"Codex did not accept the prompt within {REQUEST_TIMEOUT:.0f}s"
            ) from None
        self._settings.applied(changed)
        turn = result.get("turn") if isinstance(result, dict) else None
        # turn/started (or even turn/completed) may already have been handled by the reader.
        self._turn.accepted(turn.get("id") if isinstance(turn, dict) else None)

    async def interrupt(self) -> None:
        if not self._turn.active or self._conn.closed:
            return
        if self._turn.turn_id is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._turn.settled.wait(), REQUEST_TIMEOUT)
        turn_id = self._turn.turn_id
        if not self._turn.active or turn_id is None:
            return
        with contextlib.suppress(RpcError, ConnectionLost, TimeoutError):
            await self._conn.request(
                "turn/interrupt",
                {"threadId": self._thread_id, "turnId": turn_id},
                timeout=REQUEST_TIMEOUT,
            )

    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        pending = self._permissions.take(request_id)
        if pending is None:
            raise NotFound(f"no pending Codex permission request {request_id}")
        result, also_interrupt = answer(pending, resolution)
        try:
            await self._conn.respond(pending.rpc_id, result)
        except ConnectionLost:
            raise Unavailable("the Codex process has exited") from None
        await self._emit(
            PermissionResolved(provider=self._provider, requestId=request_id, resolution=resolution)
        )
        if also_interrupt:
            await self.interrupt()

    # Settings go with the next turn/start (see TurnSettings).

    async def set_mode(self, mode_id: str) -> None:
        self._settings.set_mode(mode_id)

    async def set_model(self, model: str) -> None:
        self._settings.set_model(model)

    async def set_thinking(self, option_id: str) -> None:
        self._settings.set_effort(option_id)

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        await self._conn.stop()
        await self._process.terminate()
        self._closed = True
        if self._turn.active:
            await self._end_turn(
                TurnCanceled(provider=self._provider, reason="closed"), "canceled", None
            )
        await self._withdraw_permissions("the Codex session closed")

    # ------------------------------------------------------------------ Codex → events

    async def _emit(self, event: AgentEvent) -> None:
        # The sink belongs to the manager: a failure there must not kill the reader task.
        async with self._emit_lock:
            try:
                await self._sink(event)
            except Exception:
                log.exception("event sink failed for agent %s", self._config.agentId)

    async def _emit_items(self, items: list[TimelineItem]) -> None:
        for item in items:
            await self._emit(Timeline(provider=self._provider, item=item))

    async def _end_turn(self, event: AgentEvent, status: ToolStatus, error: str | None) -> None:
        self._turn.ended()
        await self._emit_items(self._mapper.finish_running(status, error))
        await self._emit(event)

    async def _withdraw_permissions(self, reason: str, rpc_id: Any = None) -> None:
        for request_id in self._permissions.withdrawn(rpc_id):
            await self._emit(
                PermissionResolved(
                    provider=self._provider,
                    requestId=request_id,
                    resolution=DenyResolution(message=reason),
                )
            )

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        thread_id = params.get("threadId")
        if thread_id is not None and self._thread_id is not None and thread_id != self._thread_id:
            return
        mapper = self._mapper
        if method == "item/agentMessage/delta":
            await self._emit_items(
                mapper.text_delta(
                    "assistant", str(params.get("itemId")), str(params.get("delta", ""))
                )
            )
        elif method in ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta"):
            await self._emit_items(
                mapper.text_delta(
                    "reasoning", str(params.get("itemId")), str(params.get("delta", ""))
                )
            )
        elif method == "item/reasoning/summaryPartAdded":
            await self._emit_items(mapper.reasoning_break(str(params.get("itemId"))))
        elif method == "item/commandExecution/outputDelta":
            mapper.command_output(str(params.get("itemId")), str(params.get("delta", "")))
        elif method in ("item/started", "item/completed"):
            item = params.get("item")
            if isinstance(item, dict):
                items = mapper.started(item) if method == "item/started" else mapper.completed(item)
                await self._emit_items(items)
        elif method == "thread/tokenUsage/updated":
            usage = params.get("tokenUsage")
            if isinstance(usage, dict):
                self._turn.token_usage(usage)
        elif method == "turn/started":
            await self._turn_started(params)
        elif method == "turn/completed":
            await self._turn_completed(params)
        elif method == "turn/plan/updated":
            await self._emit_items(mapper.plan(params))
        elif method == "serverRequest/resolved" and "requestId" in params:
            # Only requests nobody answered are still pending here (an interrupt clears them).
            await self._withdraw_permissions("withdrawn by Codex", params["requestId"])
        elif method == "mcpServer/startupStatus/updated" and params.get("status") == "failed":
            error = params.get("error") or params.get("failureReason") or "unknown error"
            await self._emit_items(
                [ErrorItem(message=f"MCP server {params.get('name')!r} failed to start: {error}")]
            )

    async def _turn_started(self, params: dict[str, Any]) -> None:
        turn = as_dict(params.get("turn"))
        turn_id = turn.get("id") if isinstance(turn.get("id"), str) else None
        self._turn.started(turn_id)
        await self._emit(TurnStarted(provider=self._provider, turnId=turn_id))

    async def _turn_completed(self, params: dict[str, Any]) -> None:
        event, status, error = self._turn.end_of(self._provider, as_dict(params.get("turn")))
        await self._end_turn(event, status, error)
        # Requests of a finished turn can no longer be answered.
        await self._withdraw_permissions("the turn ended")

    async def _on_request(self, rpc_id: Any, method: str, params: dict[str, Any]) -> None:
        if method in APPROVALS or method in QUESTIONS or method == PERMISSIONS:
            request = permission_request(method, params, self._mapper)
            self._permissions.add(rpc_id, method, params, request)
            await self._emit(PermissionRequested(provider=self._provider, request=request))
            return
        log.debug("refusing Codex request %s", method)
        with contextlib.suppress(ConnectionLost):
            await self._conn.respond_error(
                rpc_id, METHOD_NOT_FOUND, f"{method} is not supported by Paseo"
            )

    async def _on_closed(self) -> None:
        if self._closing:
            return
        # Codex went away on its own: reap the group, then fail the turn it was running.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._process.wait(), 5.0)
        code = self._process.returncode
        await self._process.terminate()
        self._closed = True
        if self._turn.active:
            tail = self._process.stderr_tail(2000).strip()
            message = f"Codex exited unexpectedly (exit code {code})"
            await self._end_turn(
                TurnFailed(
                    provider=self._provider, error=message, code="process_exited", diagnostic=tail
                ),
                "failed",
                message,
            )
        await self._withdraw_permissions("the Codex process exited")
