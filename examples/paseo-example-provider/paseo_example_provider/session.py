"""One live example agent: its process, the JSON-RPC connection to it and the turn in progress.

This is where a provider does its real work, translating the program's protocol (see
:mod:`paseo_example_provider.agent`) into the event vocabulary of :mod:`paseo_hookspecs.events`:

=================================  ================================================================
the agent says                     the session emits
=================================  ================================================================
``session/open`` answered          ``thread_started``
``message/delta``                  ``timeline`` with an ``assistant_message`` / ``reasoning`` chunk
``tool/update``                    ``timeline`` with a ``tool_call`` (same ``callId`` each status)
``permission/ask``                 ``permission_requested``; answered by :meth:`respond_permission`
``turn/ended``                     ``turn_completed`` / ``turn_canceled`` / ``turn_failed``
stdout ends (the program exited)   ``turn_failed`` if a turn was running
=================================  ================================================================

``prompt`` itself emits ``turn_started`` and the ``user_message`` item. Events go to the sink in
order: the reader task of :class:`~paseo_hookspecs.stdio_rpc.StdioJsonRpc` delivers the
program's, and the turn's own events (start, end) are emitted where the turn begins or ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable
from paseo_hookspecs.events import (
    AgentEvent,
    AllowResolution,
    AssistantMessageItem,
    DenyResolution,
    PermissionRequest,
    PermissionRequested,
    PermissionResolution,
    PermissionResolved,
    ReasoningItem,
    ThreadStarted,
    Timeline,
    TimelineItem,
    ToolCallItem,
    ToolStatus,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Usage,
    UserMessageItem,
    WriteDetail,
)
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    EventSink,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import AgentProcess, ProcessLauncher
from paseo_hookspecs.stdio_rpc import METHOD_NOT_FOUND, ConnectionLost, RpcError, StdioJsonRpc
from paseo_hookspecs.turns import Turn, TurnLedger

from paseo_example_provider import agent as protocol

AGENT_ARGV = [sys.executable, str(Path(protocol.__file__))]
"""The program: this package's agent, run by the interpreter the daemon runs on. By file, not
``-m``: a plugin loaded from a directory (``paseo plugins install ./dir``) is importable in the
daemon but not on the child's ``sys.path``; the agent needs nothing but the standard library."""

START_TIMEOUT = 30.0
"""Seconds the program may take to start and open the session."""

REQUEST_TIMEOUT = 10.0
"""Seconds for the program to accept a turn or a setting (it answers those at once)."""

CANCEL_GRACE = 5.0
"""Seconds the program gets to end an interrupted turn before the session ends it itself."""


class ExampleSession(AgentSession):
    """An :class:`AgentSession` over one example agent process. Create with :meth:`start`."""

    def __init__(
        self, provider_id: str, process: AgentProcess, sink: EventSink, config: SessionConfig
    ) -> None:
        self._provider = provider_id
        self._process = process
        self._sink = sink
        self._rpc = StdioJsonRpc(
            process,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_closed=self._on_closed,
            program="the example agent",
        )
        self._turns = TurnLedger()
        self._session_id: str | None = None
        self._mode = config.modeId or "ask"
        self._model = config.model
        self._permissions: dict[str, Any] = {}
        """Pending permission requests: our request id → the program's JSON-RPC id."""
        self._open_calls: dict[str, ToolCallItem] = {}
        """Tool calls of the running turn that have not finished yet."""
        self._closed = False

    @classmethod
    async def start(
        cls,
        *,
        provider_id: str,
        config: SessionConfig,
        env: dict[str, str],
        sink: EventSink,
        launcher: ProcessLauncher,
        resume: str | None = None,
    ) -> ExampleSession:
        """Start the program and open a new conversation, or reopen ``resume``.

        Raises ``Unavailable`` when the program cannot start or refuses to, ``NotFound`` when
        ``resume`` names no stored conversation and ``InvalidParams`` for an unknown mode.
        """
        try:
            process = await launcher.launch(
                AGENT_ARGV, cwd=config.cwd, env=env, provider=provider_id, agent_id=config.agentId
            )
        except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
            raise Unavailable(f"cannot start the example agent in {config.cwd!r}: {exc}") from exc
        session = cls(provider_id, process, sink, config)
        session._rpc.start()
        params = {
            "sessionId": resume,
            "mode": config.modeId,
            "model": config.model,
            "systemPrompt": config.systemPrompt,
        }
        try:
            opened = await session._rpc.request("session/open", params, timeout=START_TIMEOUT)
        except RpcError as exc:
            await session._stop_process()
            if exc.code == protocol.NOT_FOUND:
                raise NotFound(exc.message) from None
            if exc.code == protocol.INVALID_PARAMS:
                raise InvalidParams(exc.message) from None
            raise Unavailable(f"the example agent cannot open a session: {exc.message}") from None
        except (ConnectionLost, TimeoutError):
            await session._stop_process()
            raise Unavailable(
                f"the example agent did not start (exit code {process.returncode})"
                f"{session._stderr_hint()}"
            ) from None
        except BaseException:
            await session._stop_process()
            raise
        session._session_id = str(opened["sessionId"])
        await sink(ThreadStarted(provider=provider_id, sessionId=session._session_id))
        return session

    # ------------------------------------------------------------------ interface

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def persistence_handle(self) -> PersistenceHandle | None:
        if self._session_id is None:
            return None
        # The program keeps the conversation itself: its id is all a resume needs.
        return PersistenceHandle(provider=self._provider, sessionId=self._session_id)

    def runtime_info(self) -> dict[str, Any]:
        return {"sessionId": self._session_id, "modeId": self._mode, "model": self._model}

    def diagnostics(self) -> str:
        return self._process.stderr_tail()

    async def prompt(self, text: str, *, message_id: str) -> None:
        if self._closed or self._rpc.closed:
            raise Unavailable(f"the example agent has exited{self._stderr_hint()}")
        turn = self._turns.begin()  # Conflict while a turn runs
        await self._sink(TurnStarted(provider=self._provider, turnId=str(turn.number)))
        await self._emit(UserMessageItem(text=text, messageId=message_id))
        try:
            params = {"text": text, "turnId": str(turn.number)}
            await self._rpc.request("turn/start", params, timeout=REQUEST_TIMEOUT)
        except ConnectionLost:
            return  # _on_closed ends the turn
        except (RpcError, TimeoutError) as exc:
            error = exc.message if isinstance(exc, RpcError) else "it did not answer"
            await self._end(
                turn, TurnFailed(provider=self._provider, error=f"the agent refused: {error}")
            )

    async def interrupt(self) -> None:
        turn = self._turns.current
        if turn is None or turn.finished:
            return  # idle: nothing to cancel
        turn.cancel_requested = True
        with contextlib.suppress(ConnectionLost):
            await self._rpc.notify("turn/cancel")
        try:
            await asyncio.wait_for(turn.done.wait(), CANCEL_GRACE)
        except TimeoutError:
            # A hung program must not leave the turn open: end it here.
            await self._end(turn, TurnCanceled(provider=self._provider))

    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        rpc_id = self._permissions.pop(request_id, None)
        if rpc_id is None:
            raise NotFound(f"no pending permission request {request_id!r}")
        answer: dict[str, Any] = {"allow": isinstance(resolution, AllowResolution)}
        if isinstance(resolution, DenyResolution) and resolution.message:
            answer["message"] = resolution.message
        edited = resolution.updatedInput if isinstance(resolution, AllowResolution) else None
        if edited and "content" in edited:
            answer["content"] = str(edited["content"])
        with contextlib.suppress(ConnectionLost):  # it may have exited while a person decided
            await self._rpc.respond(rpc_id, answer)
        await self._sink(
            PermissionResolved(provider=self._provider, requestId=request_id, resolution=resolution)
        )
        if isinstance(resolution, DenyResolution) and resolution.interrupt:
            await self.interrupt()

    async def set_mode(self, mode_id: str) -> None:
        await self._configure({"mode": mode_id})
        self._mode = mode_id

    async def set_model(self, model: str) -> None:
        await self._configure({"model": model})
        self._model = model

    async def _configure(self, params: dict[str, str]) -> None:
        try:
            await self._rpc.request("session/configure", params, timeout=REQUEST_TIMEOUT)
        except RpcError as exc:
            raise InvalidParams(exc.message) from None
        except (ConnectionLost, TimeoutError):
            raise Unavailable(f"the example agent did not answer{self._stderr_hint()}") from None

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        turn = self._turns.current
        if turn is not None:
            await self._end(turn, TurnCanceled(provider=self._provider, reason="closed"))
        await self._stop_process()

    # ------------------------------------------------------------------ from the program

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        turn = self._turns.current
        if turn is None or turn.finished or params.get("turnId") != str(turn.number):
            # A late message of a turn that has already ended (say, one the session ended
            # itself when the program was slow to honour an interrupt).
            return
        if method == "message/delta":
            text, message_id = str(params.get("text", "")), str(params.get("messageId", ""))
            item: TimelineItem = (
                ReasoningItem(text=text, messageId=message_id)
                if params.get("kind") == "reasoning"
                else AssistantMessageItem(text=text, messageId=message_id)
            )
            await self._emit(item)
        elif method == "tool/update":
            call = ToolCallItem(
                callId=str(params["callId"]),
                name=str(params.get("name", "write")),
                status=params["status"],
                detail=WriteDetail(path=str(params["path"]), content=params.get("content")),
                error=params.get("error"),
            )
            if call.status == "running":
                self._open_calls[call.callId] = call
            else:
                self._open_calls.pop(call.callId, None)
            await self._emit(call)
        elif method == "turn/ended":
            await self._end(turn, self._turn_end(params))

    def _turn_end(self, params: dict[str, Any]) -> AgentEvent:
        reason = params.get("stopReason")
        if reason == "completed":
            usage = params.get("usage")
            return TurnCompleted(
                provider=self._provider, usage=Usage(**usage) if isinstance(usage, dict) else None
            )
        if reason == "cancelled":
            return TurnCanceled(provider=self._provider)
        return TurnFailed(
            provider=self._provider,
            error=str(params.get("error") or f"the turn ended with {reason!r}"),
            code="agent_error",
            diagnostic=self._process.stderr_tail() or None,
        )

    async def _on_request(self, rpc_id: Any, method: str, params: dict[str, Any]) -> None:
        if method != "permission/ask":
            with contextlib.suppress(ConnectionLost):
                await self._rpc.respond_error(rpc_id, METHOD_NOT_FOUND, f"no method {method}")
            return
        path, content = str(params.get("path", "")), str(params.get("content", ""))
        request = PermissionRequest(
            id=f"perm-{uuid.uuid4().hex[:12]}",
            kind="tool",
            title=f"Write {path}",
            description=f"{len(content)} characters",
            toolName="write",
            input={"path": path, "content": content},
            detail=WriteDetail(path=path, content=content),
        )
        # Recorded before the event: a sink may answer from inside its callback.
        self._permissions[request.id] = rpc_id
        await self._sink(PermissionRequested(provider=self._provider, request=request))

    async def _on_closed(self) -> None:
        if self._closed:
            return
        self._closed = True
        code = await self._process.terminate(grace=1.0)
        turn = self._turns.current
        if turn is not None:
            await self._end(
                turn,
                TurnFailed(
                    provider=self._provider,
                    error=f"the example agent exited during the turn (exit code {code})",
                    code="process_exited",
                    diagnostic=self._process.stderr_tail() or None,
                ),
            )

    # ------------------------------------------------------------------ helpers

    async def _end(self, turn: Turn, event: AgentEvent) -> None:
        """End ``turn`` with ``event`` unless something else ended it already."""
        if self._turns.finish(turn) is None:
            return
        try:
            if event.type != "turn_completed":
                # Calls still open when a turn is cut short will never finish.
                status: ToolStatus = "canceled" if event.type == "turn_canceled" else "failed"
                for call in self._open_calls.values():
                    await self._emit(call.model_copy(update={"status": status}))
            pending, self._permissions = self._permissions, {}
            for request_id in pending:
                resolution = DenyResolution(message="the turn ended before an answer")
                await self._sink(
                    PermissionResolved(
                        provider=self._provider, requestId=request_id, resolution=resolution
                    )
                )
            await self._sink(event)
        finally:
            self._open_calls.clear()
            self._turns.settle(turn)

    async def _emit(self, item: TimelineItem) -> None:
        await self._sink(Timeline(provider=self._provider, item=item))

    async def _stop_process(self) -> None:
        # terminate() returns once the whole process group is gone; then stop reading.
        await self._process.terminate()
        await self._rpc.stop()

    def _stderr_hint(self) -> str:
        tail = self._process.stderr_tail(1500).strip()
        return f"; its stderr ends with:\n{tail}" if tail else ""
