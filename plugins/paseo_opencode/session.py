"""One OpenCode conversation on the provider's shared ``opencode serve``.

Start-up: ``POST /session`` with a title (without one OpenCode first spends a model request on
inventing it) and the mode's explicit permission rules (OpenCode's defaults run every tool
without asking), then a subscription to ``GET /event`` for the session's directory. Per prompt:
``POST /session/{id}/prompt_async`` with the mode's agent; OpenCode streams
``message.part.delta`` (text and reasoning), ``message.part.updated`` (tool parts moving through
pending → running → completed / error), may ask ``permission.asked`` (answered by ``POST
/permission/{id}/reply`` with ``once`` or ``reject``) or ``question.asked`` (``/question/{id}/
reply`` or ``/reject``), and ends the turn with ``session.idle``: canceled after an interrupt
(``POST /session/{id}/abort``), failed when a ``session.error`` came first, else completed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable
from paseo_hookspecs.events import (
    AgentEvent,
    AllowResolution,
    AssistantMessageItem,
    DenyResolution,
    ErrorItem,
    PermissionRequest,
    PermissionRequested,
    PermissionResolution,
    PermissionResolved,
    ReasoningItem,
    ThreadStarted,
    Timeline,
    TimelineItem,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Usage,
    UserMessageItem,
)
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    EventSink,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.ordered_events import OrderedEvents
from paseo_hookspecs.process import ProcessLauncher
from paseo_hookspecs.turns import Turn, TurnLedger

from .http import HttpError, OpenCodeClient
from .mapping import Mode, as_dict, as_list, error_text, mode_by_id, tool_item
from .server import SharedServer

log = logging.getLogger("paseo_opencode.session")

ABORT_GRACE = 10.0
"""Seconds OpenCode gets to go idle after an abort before the session ends the turn itself."""


class OpenCodeSession(AgentSession):
    """A session of the shared server. Create with :meth:`start`."""

    def __init__(
        self,
        provider_id: str,
        *,
        server: SharedServer,
        launcher: ProcessLauncher,
        env: Mapping[str, str],
        config: SessionConfig,
        sink: EventSink,
        mode: Mode,
    ) -> None:
        self._provider = provider_id
        self._server = server
        self._launcher = launcher
        self._env = dict(env)
        self._cwd = config.cwd
        self._mode = mode
        self._model = config.model
        self._variant = config.thinkingOptionId
        self._system = config.systemPrompt
        self._session_id: str | None = None
        self._turns = TurnLedger()
        self._parts: dict[str, str] = {}
        """Part id → part type (``text``, ``reasoning``, ``tool``) of the running turn."""
        self._tool_status: dict[str, str] = {}
        self._error: str | None = None
        self._usage: Usage | None = None
        self._permissions: dict[str, str] = {}
        """Pending request id → ``permission`` or ``question``."""
        self._events = OrderedEvents(sink, name="opencode-events")
        self._listener: asyncio.Task[None] | None = None
        self._generation = -1
        self._subscribed = asyncio.Event()
        self._accepted: Turn | None = None
        """The turn OpenCode accepted (a stream that ends before acceptance is the prompt's
        business: it restarts the server)."""
        self._closed = False
        server.acquire()

    # ------------------------------------------------------------------ start-up

    @classmethod
    async def start(
        cls,
        provider_id: str,
        *,
        server: SharedServer,
        launcher: ProcessLauncher,
        env: Mapping[str, str],
        config: SessionConfig,
        sink: EventSink,
        mode: Mode,
        resume_id: str | None = None,
    ) -> OpenCodeSession:
        session = cls(
            provider_id,
            server=server,
            launcher=launcher,
            env=env,
            config=config,
            sink=sink,
            mode=mode,
        )
        try:
            client = await session._client()
            if resume_id is None:
                body: dict[str, Any] = {"title": "Paseo agent", "permission": mode.rules}
                created = await client.call("POST", "/session", query=session._q(), body=body)
                session._session_id = str(created["id"])
            else:
                try:
                    await client.call("GET", f"/session/{resume_id}", query=session._q())
                except HttpError as exc:
                    if exc.status == 404:
                        raise NotFound(f"OpenCode has no session {resume_id}") from None
                    raise
                session._session_id = resume_id
                await client.call(
                    "PATCH",
                    f"/session/{resume_id}",
                    query=session._q(),
                    body={"permission": mode.rules},
                )
            await session._subscribe(client)
        except HttpError as exc:
            await session.close()
            raise Unavailable(f"the OpenCode server refused the session: {exc}") from None
        except BaseException:
            await session.close()
            raise
        await session._emit(ThreadStarted(provider=provider_id, sessionId=session._session_id))
        return session

    def _q(self) -> dict[str, str]:
        return {"directory": self._cwd}

    async def _client(self, stale: OpenCodeClient | None = None) -> OpenCodeClient:
        client = await self._server.client(self._launcher, self._env, self._cwd, stale=stale)
        if self._generation != self._server.generation and self._session_id is not None:
            await self._subscribe(client)
        return client

    async def _subscribe(self, client: OpenCodeClient) -> None:
        """(Re)open the event stream of this directory; returns once it is connected."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        self._generation = self._server.generation
        self._subscribed.clear()
        self._listener = asyncio.create_task(self._listen(client), name="opencode-sse")
        await asyncio.wait_for(self._subscribed.wait(), 30.0)

    async def _listen(self, client: OpenCodeClient) -> None:
        try:
            async for event in client.events("/event", self._q()):
                if isinstance(event, dict) and event.get("type") == "server.connected":
                    self._subscribed.set()
                elif isinstance(event, dict):
                    try:
                        await self._on_event(event)
                    except Exception:  # one bad event must not end the stream
                        log.exception("handling an OpenCode %s event failed", event.get("type"))
        except (OSError, ConnectionError, HttpError, asyncio.IncompleteReadError) as exc:
            log.info("OpenCode event stream ended: %s", exc)
        if not self._closed:
            await self._server_lost()

    async def _server_lost(self) -> None:
        turn = self._turns.current
        if turn is not None and not turn.finished and turn is self._accepted:
            process = self._server.process
            await self._finish(
                turn,
                TurnFailed(
                    provider=self._provider,
                    error="the OpenCode server stopped during the turn",
                    code="process_exited",
                    diagnostic=(process.stderr_tail() if process else "") or None,
                ),
            )

    # ------------------------------------------------------------------ the contract

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def persistence_handle(self) -> PersistenceHandle | None:
        if self._session_id is None:
            return None
        return PersistenceHandle(
            provider=self._provider,
            sessionId=self._session_id,
            nativeHandle={"sessionId": self._session_id, "directory": self._cwd},
        )

    def runtime_info(self) -> dict[str, Any]:
        return {
            "sessionId": self._session_id,
            "modeId": self._mode.id,
            "model": self._model,
            "thinkingOptionId": self._variant,
        }

    def diagnostics(self) -> str:
        process = self._server.process
        return process.stderr_tail() if process else ""

    async def prompt(self, text: str, *, message_id: str) -> None:
        if self._closed:
            raise Unavailable("the OpenCode session is closed")
        turn = self._turns.begin()
        self._parts.clear()
        self._tool_status.clear()
        self._error, self._usage = None, None
        await self._emit(TurnStarted(provider=self._provider, turnId=str(turn.number)))
        await self._emit_item(UserMessageItem(text=text, messageId=message_id))
        body: dict[str, Any] = {
            "parts": [{"type": "text", "text": text}],
            "agent": self._mode.agent,
        }
        if self._model and "/" in self._model:
            provider, _, model = self._model.partition("/")
            body["model"] = {"providerID": provider, "modelID": model}
        if self._variant:
            body["variant"] = self._variant
        if self._system:
            # OpenCode keeps no system prompt per session: it adds `system` to its own prompt
            # for the one request, so every prompt carries it.
            body["system"] = self._system
        path = f"/session/{self._session_id}/prompt_async"
        try:
            client = await self._client()
            try:
                await client.call("POST", path, query=self._q(), body=body)
            except (ConnectionError, asyncio.IncompleteReadError):
                # The server died (its exit perhaps not reaped yet): start another, once.
                client = await self._client(stale=client)
                await client.call("POST", path, query=self._q(), body=body)
            self._accepted = turn
        except (HttpError, OSError, TimeoutError, Unavailable) as exc:
            await self._finish(
                turn,
                TurnFailed(provider=self._provider, error=f"OpenCode refused the prompt: {exc}"),
            )

    async def interrupt(self) -> None:
        turn = self._turns.current
        if turn is None or turn.finished:
            return
        turn.cancel_requested = True
        with contextlib.suppress(HttpError, OSError, TimeoutError, Unavailable):
            client = await self._client()
            await client.call("POST", f"/session/{self._session_id}/abort", query=self._q())
        try:
            await asyncio.wait_for(turn.done.wait(), ABORT_GRACE)
        except TimeoutError:
            log.warning("OpenCode did not go idle within %.0f s of an abort", ABORT_GRACE)
            await self._finish(turn, TurnCanceled(provider=self._provider))
        await self._events.flush()

    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        kind = self._permissions.pop(request_id, None)
        if kind is None:
            raise NotFound(f"no pending permission request {request_id!r}")
        allow = isinstance(resolution, AllowResolution)
        if kind == "question":
            answers = (
                (resolution.updatedInput or {}).get("answers")
                if isinstance(resolution, AllowResolution)
                else None
            )
            path = f"/question/{request_id}/" + ("reply" if allow else "reject")
            body: Any = {"answers": as_list(answers)} if allow else None
        else:
            path = f"/permission/{request_id}/reply"
            body = {"reply": "once" if allow else "reject"}
            message = getattr(resolution, "message", None)
            if not allow and message:
                body["message"] = message
        try:
            client = await self._client()
            await client.call("POST", path, query=self._q(), body=body)
        except (HttpError, OSError, TimeoutError) as exc:
            raise Unavailable(f"OpenCode did not take the answer: {exc}") from exc
        await self._emit(
            PermissionResolved(provider=self._provider, requestId=request_id, resolution=resolution)
        )
        if not allow and getattr(resolution, "interrupt", False):
            await self.interrupt()

    async def set_mode(self, mode_id: str) -> None:
        mode = mode_by_id(mode_id)
        if mode is None:
            raise InvalidParams(f"OpenCode has no mode {mode_id!r}")
        client = await self._client()
        await client.call(
            "PATCH",
            f"/session/{self._session_id}",
            query=self._q(),
            body={"permission": mode.rules},
        )
        self._mode = mode

    async def set_model(self, model: str) -> None:
        if "/" not in model:
            raise InvalidParams(f"an OpenCode model is named provider/model, not {model!r}")
        self._model = model

    async def set_thinking(self, option_id: str) -> None:
        self._variant = option_id

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        turn = self._turns.current
        if turn is not None and not turn.finished:
            with contextlib.suppress(Exception):
                client = await asyncio.wait_for(self._client(), 10.0)
                await client.call("POST", f"/session/{self._session_id}/abort", query=self._q())
            await self._finish(turn, TurnCanceled(provider=self._provider, reason="closed"))
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        await self._server.release()
        await self._events.stop()

    # ------------------------------------------------------------------ OpenCode's events

    async def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        props = event.get("properties")
        if not isinstance(props, dict):
            return
        session = props.get("sessionID") or (props.get("part") or {}).get("sessionID")
        if session != self._session_id:
            return
        turn = self._turns.current
        if turn is None or turn.finished:
            return
        if kind == "message.part.updated":
            await self._on_part(props.get("part") or {})
        elif kind == "message.part.delta" and props.get("field") == "text":
            part_type = self._parts.get(str(props.get("partID")))
            text = props.get("delta")
            if isinstance(text, str) and text and part_type in ("text", "reasoning"):
                part_id = str(props["partID"])
                item: TimelineItem = (
                    AssistantMessageItem(text=text, messageId=part_id)
                    if part_type == "text"
                    else ReasoningItem(text=text, messageId=part_id)
                )
                await self._emit_item(item)
        elif kind == "permission.asked":
            await self._on_permission(props)
        elif kind == "question.asked":
            await self._on_question(props)
        elif kind == "session.error":
            self._error = error_text(props.get("error"))
        elif kind == "session.idle":
            await self._finish(turn, self._turn_end(turn))

    async def _on_part(self, part: dict[str, Any]) -> None:
        part_id, part_type = str(part.get("id")), part.get("type")
        if isinstance(part_type, str):
            self._parts[part_id] = part_type
        if part_type == "step-finish":
            tokens = as_dict(part.get("tokens"))
            cache = as_dict(tokens.get("cache"))
            self._usage = Usage(
                inputTokens=tokens.get("input"),
                outputTokens=tokens.get("output"),
                cachedInputTokens=cache.get("read"),
                cacheWriteTokens=cache.get("write"),
                costUsd=part.get("cost") if isinstance(part.get("cost"), int | float) else None,
            )
        if part_type != "tool":
            return
        item = tool_item(part)
        if item is None or self._tool_status.get(item.callId) == item.status:
            return
        self._tool_status[item.callId] = item.status
        await self._emit_item(item)

    async def _on_permission(self, props: dict[str, Any]) -> None:
        request_id = str(props.get("id"))
        permission = str(props.get("permission") or "tool")
        patterns = as_list(props.get("patterns"))
        metadata = as_dict(props.get("metadata"))
        self._permissions[request_id] = "permission"
        request = PermissionRequest(
            id=request_id,
            kind="tool",
            title=f"OpenCode asks to {permission}: {', '.join(map(str, patterns)) or '*'}",
            toolName=permission,
            input={"patterns": patterns, **metadata},
        )
        await self._emit(PermissionRequested(provider=self._provider, request=request))

    async def _on_question(self, props: dict[str, Any]) -> None:
        request_id = str(props.get("id"))
        questions = as_list(props.get("questions"))
        self._permissions[request_id] = "question"
        first = questions[0] if questions and isinstance(questions[0], dict) else {}
        request = PermissionRequest(
            id=request_id,
            kind="question",
            title=str(first.get("question") or first.get("header") or "OpenCode has a question"),
            input={"questions": questions},
        )
        await self._emit(PermissionRequested(provider=self._provider, request=request))

    def _turn_end(self, turn: Turn) -> AgentEvent:
        if turn.cancel_requested:
            return TurnCanceled(provider=self._provider)
        if self._error is not None:
            return TurnFailed(provider=self._provider, error=self._error, code="model_error")
        return TurnCompleted(provider=self._provider, usage=self._usage)

    async def _finish(self, turn: Turn, event: AgentEvent) -> None:
        if self._turns.finish(turn) is None:
            return
        try:
            for request_id in list(self._permissions):
                self._permissions.pop(request_id)
                await self._emit(
                    PermissionResolved(
                        provider=self._provider,
                        requestId=request_id,
                        resolution=DenyResolution(message="the turn ended"),
                    )
                )
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
