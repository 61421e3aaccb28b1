"""One live ACP agent: its process, its JSON-RPC connection and its conversation.

Flow: ``initialize`` → ``session/new`` (or ``session/load`` to resume) → per turn
``session/prompt``, during which the agent streams ``session/update`` notifications and may ask
``session/request_permission``; the prompt's result carries the ``stopReason`` that ends the
turn. ``session/cancel`` (a notification) interrupts.

The client offers no file-system or terminal capabilities: agents then use their own tools,
which keeps every effect inside the agent's process group and its own permission flow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from paseo_hookspecs.errors import InvalidParams, Unavailable
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
    UserMessageItem,
)
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    EventSink,
    ModeInfo,
    PersistenceHandle,
    PromptImage,
    SessionConfig,
    SlashCommand,
)
from paseo_hookspecs.ordered_events import OrderedEvents
from paseo_hookspecs.process import AgentProcess, ProcessLauncher
from paseo_hookspecs.stdio_rpc import (
    METHOD_NOT_FOUND,
    ConnectionLost,
    RpcError,
    StdioJsonRpc,
    host_version,
)
from paseo_hookspecs.turns import Turn, TurnLedger

from paseo_acp import _mapping
from paseo_acp._options import SETTING_NAMES, SessionOptions, Setting
from paseo_acp._permissions import PendingPermissions, permission_request
from paseo_acp._updates import SessionUpdates

log = logging.getLogger("paseo_acp.session")

DEFAULT_STARTUP_TIMEOUT = 60.0
"""Seconds for ``initialize`` + ``session/new``: npm agents start a Node runtime and a CLI."""
REQUEST_TIMEOUT = 30.0
"""Seconds for a settings change (mode, model, thinking)."""
CANCEL_GRACE = 10.0
"""Seconds an agent gets to end a cancelled turn before the session ends it on its own."""


class AcpSession(AgentSession):
    """An :class:`AgentSession` over one ACP agent process. Create with :meth:`start`."""

    def __init__(
        self,
        *,
        provider_id: str,
        process: AgentProcess,
        sink: EventSink,
        config: SessionConfig,
    ) -> None:
        self._provider = provider_id
        self._process = process
        self._config = config
        self._peer = StdioJsonRpc(
            process,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_closed=self._on_connection_closed,
        )
        self._events = OrderedEvents(sink, name="acp-events")
        self._session_id: str | None = None
        self._capabilities: dict[str, Any] = {}
        self._agent_info: dict[str, Any] = {}
        self._updates = SessionUpdates()
        self._turns = TurnLedger()
        self._prompt_task: asyncio.Task[None] | None = None
        self._permissions = PendingPermissions()
        self._resumed: bool | None = None
        self._resume_note: str | None = None
        self._closed = False

    # ------------------------------------------------------------------ start-up

    @classmethod
    async def start(
        cls,
        *,
        provider_id: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
        resume_session_id: str | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> AcpSession:
        """Start the agent program and open (or load) a session.

        Raises ``Unavailable`` when the program is missing, exits or does not answer, and
        ``InvalidParams`` when the requested mode, model or thinking level is refused.
        """
        try:
            process = await launcher.launch(
                argv,
                cwd=config.cwd,
                env=env,
                provider=provider_id,
                agent_id=config.agentId,
            )
        except FileNotFoundError as exc:
            missing = argv[0] if exc.filename in (None, argv[0]) else exc.filename
            raise Unavailable(
                f"cannot start the ACP agent: {missing!r} was not found; install it or fix "
                f"agents.providers.{provider_id}.command in config.json"
            ) from exc
        except (NotADirectoryError, PermissionError) as exc:
            raise Unavailable(f"cannot start the ACP agent {argv[0]!r}: {exc}") from exc
        session = cls(provider_id=provider_id, process=process, sink=sink, config=config)
        session._peer.start()
        try:
            async with asyncio.timeout(startup_timeout):
                await session._initialize()
                if resume_session_id is not None:
                    await session._load_or_new(resume_session_id)
                else:
                    await session._new_session()
            await session._apply_initial_settings()
        except TimeoutError:
            await session._abort()
            raise Unavailable(
                f"the ACP agent {argv[0]!r} did not finish starting within "
                f"{startup_timeout:.0f} s{session._stderr_hint()}"
            ) from None
        except ConnectionLost:
            code = await session._abort()
            raise Unavailable(
                f"the ACP agent {argv[0]!r} exited during start-up (exit code {code}); check "
                f"that the command runs on its own, and agents.providers.{provider_id}.command "
                f"and .env in config.json{session._stderr_hint()}"
            ) from None
        except BaseException:
            await session._abort()
            raise
        assert session._session_id is not None
        await session._emit(ThreadStarted(provider=provider_id, sessionId=session._session_id))
        return session

    async def _initialize(self) -> None:
        params = _mapping.initialize_params(host_version())
        result = await self._peer.request("initialize", params, timeout=None)
        result = result if isinstance(result, dict) else {}
        capabilities = result.get("agentCapabilities")
        self._capabilities = capabilities if isinstance(capabilities, dict) else {}
        info = result.get("agentInfo")
        self._agent_info = info if isinstance(info, dict) else {}

    def _session_params(self) -> dict[str, Any]:
        return _mapping.session_params(self._config, self._capabilities, self._provider)

    async def _new_session(self) -> None:
        try:
            result = await self._peer.request("session/new", self._session_params(), timeout=None)
        except RpcError as exc:
            hint = (
                "; the agent needs to be signed in first (run it once in a terminal)"
                if exc.code == _mapping.AUTH_REQUIRED
                else ""
            )
            raise Unavailable(f"the ACP agent refused session/new: {exc.describe()}{hint}") from exc
        result = result if isinstance(result, dict) else {}
        session_id = result.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            raise Unavailable("the ACP agent answered session/new without a sessionId")
        self._session_id = session_id
        self._updates.options.update_from(result)

    def can_load(self) -> bool:
        """Whether the agent advertised ``loadSession``."""
        return self._capabilities.get("loadSession") is True

    async def _load_or_new(self, session_id: str) -> None:
        if not self.can_load():
            await self._new_session()
            self._resumed = False
            self._resume_note = (
                "this ACP agent cannot resume conversations (it does not offer session/load): "
                "a new conversation was started and the agent does not remember earlier turns"
            )
            return
        params = self._session_params()
        params["sessionId"] = session_id
        # The agent replays the conversation as session/update notifications before it
        # answers; Paseo's timeline already holds that history, so the replay is not re-emitted.
        self._updates.loading = True
        try:
            result = await self._peer.request("session/load", params, timeout=None)
        except RpcError as exc:
            self._updates.loading = False
            await self._new_session()
            self._resumed = False
            self._resume_note = (
                f"the ACP agent could not load conversation {session_id} ({exc.describe()}): "
                "a new conversation was started and the agent does not remember earlier turns"
            )
            return
        finally:
            self._updates.loading = False
        self._session_id = session_id
        self._resumed = True
        self._updates.options.update_from(result if isinstance(result, dict) else {})

    async def _apply_initial_settings(self) -> None:
        wanted: list[tuple[Setting, str | None]] = [
            ("mode", self._config.modeId),
            ("model", self._config.model),
            ("thinking", self._config.thinkingOptionId),
        ]
        for name, value in wanted:
            if value is not None and value != self._updates.options.setting(name).current:
                await self._change(name, value)
        if self._resume_note is not None:
            await self._emit_item(ErrorItem(message=self._resume_note))

    async def _abort(self) -> int:
        """Tear down a session that failed to start (no events); returns the exit code."""
        self._closed = True
        code = await self._terminate(grace=1.0)
        await self._peer.stop()
        await self._events.stop()
        return code

    async def _terminate(self, grace: float = 3.0) -> int:
        """Kill and reap the whole process tree (the kernel helper also kills processes that
        left the group, as claude-agent-acp's detached Claude CLI does)."""
        return await self._process.terminate(grace=grace)

    def _stderr_hint(self) -> str:
        tail = self._process.stderr_tail(1500).strip()
        return f"; its stderr ends with:\n{tail}" if tail else ""

    # ------------------------------------------------------------------ interface

    @property
    def session_id(self) -> str | None:
        return self._session_id

    @property
    def options(self) -> SessionOptions:
        """The session's modes, models and thinking levels as the agent advertised them."""
        return self._updates.options

    def modes(self) -> list[ModeInfo] | None:
        listed = self._updates.options.modes()
        return listed or None

    async def history(self) -> list[TimelineItem] | None:
        return self._updates.replay.items() if self._resumed else None

    def persistence_handle(self) -> PersistenceHandle | None:
        if self._session_id is None:
            return None
        return PersistenceHandle(
            provider=self._provider, sessionId=self._session_id, nativeHandle=self._session_id
        )

    def runtime_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "sessionId": self._session_id,
            "modeId": self._updates.options.mode.current,
            "model": self._updates.options.model.current,
            "thinkingOptionId": self._updates.options.thinking.current,
            "canLoadSession": self.can_load(),
        }
        if self._agent_info:
            info["agentInfo"] = {
                k: self._agent_info[k]
                for k in ("name", "title", "version")
                if k in self._agent_info
            }
        if self._resumed is not None:
            info["resumed"] = self._resumed
        if self._updates.title:
            info["title"] = self._updates.title
        if self._updates.commands:
            info["commands"] = [c.name for c in self._updates.commands]
        return info

    def commands(self) -> list[SlashCommand]:
        return list(self._updates.commands)

    def diagnostics(self) -> str:
        return self._process.stderr_tail()

    async def prompt(self, text: str, *, message_id: str) -> None:
        await self.prompt_with_images(text, [], message_id=message_id)

    async def prompt_with_images(
        self, text: str, images: list[PromptImage], *, message_id: str
    ) -> None:
        blocks = _mapping.prompt_blocks(text, images, self._capabilities)
        gone = self._closed or self._peer.closed or self._session_id is None
        if gone and not self._turns.active:
            raise Unavailable(f"the ACP agent has exited{self._stderr_hint()}")
        turn = self._turns.begin()
        self._updates.turn_begun()
        await self._emit(TurnStarted(provider=self._provider, turnId=str(turn.number)))
        await self._emit_item(UserMessageItem(text=text, messageId=message_id))
        try:
            future = await self._peer.send_request(
                "session/prompt",
                {"sessionId": self._session_id, "prompt": blocks},
            )
        except ConnectionLost:
            # The reader reports the exit and fails the turn (see _on_connection_closed).
            return
        self._prompt_task = asyncio.create_task(self._await_prompt(turn, future))

    async def _await_prompt(self, turn: Turn, future: asyncio.Future[Any]) -> None:
        try:
            result = await future
        except ConnectionLost:
            return  # _on_connection_closed (or close()) ends the turn
        except RpcError as exc:
            if turn.cancel_requested:
                await self._finish_turn(turn, TurnCanceled(provider=self._provider))
            else:
                await self._finish_turn(
                    turn,
                    TurnFailed(
                        provider=self._provider,
                        error=f"the ACP agent failed the turn: {exc.describe()}",
                        code="acp_error",
                        diagnostic=self._process.stderr_tail() or None,
                        rpcCode=exc.code,
                    ),
                )
            return
        ended = _mapping.prompt_end(self._provider, result, self._updates.last_usage)
        await self._finish_turn(turn, ended)

    async def _finish_turn(self, turn: Turn, event: AgentEvent) -> None:
        if self._turns.finish(turn) is None:
            return
        try:
            if event.type != "turn_completed":
                # Calls still open when a turn is cut short will never complete.
                leftover: ToolStatus = "canceled" if event.type == "turn_canceled" else "failed"
                for call_id in self._updates.stream.cut_short(leftover):
                    await self._emit_tool(call_id)
            await self._drop_permissions("the turn ended before the request was answered")
            await self._emit(event)
        finally:
            self._updates.turn_ended()
            self._turns.settle(turn)

    async def interrupt(self) -> None:
        turn = self._turns.current
        if turn is None or turn.finished:
            return
        await self._request_cancel(turn)
        try:
            await asyncio.wait_for(turn.done.wait(), CANCEL_GRACE)
        except TimeoutError:
            log.warning("ACP agent did not end a cancelled turn within %.0f s", CANCEL_GRACE)
            await self._finish_turn(turn, TurnCanceled(provider=self._provider))
        await self._flush()

    async def _request_cancel(self, turn: Turn) -> None:
        if not turn.cancel_requested:
            turn.cancel_requested = True
            with contextlib.suppress(ConnectionLost):
                await self._peer.notify("session/cancel", {"sessionId": self._session_id})
            # ACP: the client answers its open permission requests with "cancelled".
            await self._drop_permissions("the turn was interrupted")

    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        pending, outcome = self._permissions.answer(request_id, resolution)
        interrupting = isinstance(resolution, DenyResolution) and resolution.interrupt
        turn = self._turns.current
        if interrupting and turn is not None and not turn.finished:
            # Cancel before the rejection arrives, so the agent stops instead of carrying on
            # with "the tool was rejected".
            await self._request_cancel(turn)
        await self._respond(pending.rpc_id, {"outcome": outcome})
        await self._emit(
            PermissionResolved(provider=self._provider, requestId=request_id, resolution=resolution)
        )
        if interrupting:
            await self.interrupt()

    async def _drop_permissions(self, reason: str) -> None:
        for request_id, permission in self._permissions.take_all().items():
            await self._respond(permission.rpc_id, {"outcome": {"outcome": "cancelled"}})
            await self._emit(
                PermissionResolved(
                    provider=self._provider,
                    requestId=request_id,
                    resolution=DenyResolution(message=reason, interrupt=True),
                )
            )

    async def set_mode(self, mode_id: str) -> None:
        await self._change("mode", mode_id)

    async def set_model(self, model: str) -> None:
        await self._change("model", model)

    async def set_thinking(self, option_id: str) -> None:
        await self._change("thinking", option_id)

    async def _change(self, name: Setting, value: str) -> None:
        options = self._updates.options
        options.check(name, value)
        label = SETTING_NAMES[name]
        assert self._session_id is not None
        method, params = options.change_request(name, value, self._session_id)
        try:
            result = await self._peer.request(method, params, timeout=REQUEST_TIMEOUT)
        except RpcError as exc:
            raise InvalidParams(
                f"the ACP agent refused {label} {value!r}: {exc.describe()}"
            ) from exc
        except (TimeoutError, ConnectionLost) as exc:
            raise Unavailable(f"the ACP agent did not confirm {label} {value!r}") from exc
        if isinstance(result, dict) and result.get("configOptions"):
            options.update_from({"configOptions": result["configOptions"]})
        options.set_current(name, value)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        turn = self._turns.current
        if turn is not None and not turn.finished:
            with contextlib.suppress(Exception):
                await self._finish_turn(
                    turn, TurnCanceled(provider=self._provider, reason="closed")
                )
        await self._terminate()
        await self._peer.stop()
        task, self._prompt_task = self._prompt_task, None
        if turn is not None and task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._events.stop()

    # ------------------------------------------------------------------ incoming messages

    async def _on_connection_closed(self) -> None:
        if self._closed:
            return
        self._closed = True
        code = await self._terminate(grace=1.0)
        turn = self._turns.current
        if turn is not None and not turn.finished:
            await self._finish_turn(
                turn,
                TurnFailed(
                    provider=self._provider,
                    error=f"the ACP agent exited during the turn (exit code {code})",
                    code="process_exited",
                    diagnostic=self._process.stderr_tail() or None,
                ),
            )

    async def _on_request(self, rpc_id: Any, method: str, params: dict[str, Any]) -> None:
        if method != "session/request_permission":
            # No fs/terminal capability was offered, so an agent asking for one is broken.
            with contextlib.suppress(ConnectionLost):
                await self._peer.respond_error(
                    rpc_id, METHOD_NOT_FOUND, f"{method} is not supported"
                )
            return
        call = params.get("toolCall")
        call = dict(call) if isinstance(call, dict) else {}
        call_id = call.get("toolCallId")
        stream = self._updates.stream
        merged = stream.merge_tool(call_id, call) if isinstance(call_id, str) else call
        pending = permission_request(rpc_id, params, merged)
        self._permissions.add(pending)
        await self._emit(PermissionRequested(provider=self._provider, request=pending.request))

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method != "session/update":
            return
        session_id = params.get("sessionId")
        if self._session_id is not None and session_id not in (None, self._session_id):
            return
        update = params.get("update")
        if not isinstance(update, dict):
            return
        item = self._updates.apply(update)
        if item is not None:
            await self._emit_item(item)

    async def _emit_tool(self, call_id: str) -> None:
        item = self._updates.stream.tool_item(call_id)
        if item is not None:
            await self._emit_item(item)

    async def _emit_item(self, item: TimelineItem) -> None:
        self._updates.item_made(item)
        await self._emit(Timeline(provider=self._provider, item=item))

    async def _emit(self, event: AgentEvent) -> None:
        await self._events.put(event)

    async def _flush(self) -> None:
        await self._events.flush()

    async def _respond(self, rpc_id: Any, result: Any) -> None:
        # The agent may have exited while a person was deciding: the answer has nowhere to go.
        with contextlib.suppress(ConnectionLost):
            await self._peer.respond(rpc_id, result)
