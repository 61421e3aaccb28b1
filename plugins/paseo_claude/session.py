"""One Claude Code process driven through its stream-json control protocol.

The process runs ``claude -p --input-format stream-json --output-format stream-json --verbose
--permission-prompt-tool stdio --include-partial-messages`` and stays alive across turns: a
turn is one ``user`` line on stdin, and ends with one ``result`` line on stdout. Both sides
send ``control_request`` lines and answer them with ``control_response`` lines carrying the same
``request_id``: Paseo sends ``initialize``, ``interrupt``, ``set_permission_mode``,
``set_model`` and ``apply_flag_settings`` (the effort level); Claude Code sends
``can_use_tool`` (a permission prompt) and withdraws one it no longer needs with
``control_cancel_request`` (an interrupt while a prompt is pending).

Text streams as ``stream_event`` deltas; the complete ``assistant`` message that follows
repeats the text, so only its tool calls are taken from it.

Observed with Claude Code 2.1.332 against the fake model server, and relied on here:

- ``system/init`` opens every turn (not only the first); ``result`` closes it, with
  ``total_cost_usd`` as the process's running total rather than the turn's cost.
- An HTTP error from the model ends the turn with ``is_error`` and ``api_error_status`` (after a
  synthetic ``assistant`` message flagged ``is_api_error_message``); the process lives on.
- ``interrupt`` while a permission prompt is pending makes Claude Code withdraw the prompt with
  ``control_cancel_request`` and then end the turn; an ``interrupt`` while idle is answered but
  produces no ``result``. A deny with ``interrupt: true`` ends the turn by itself, so Paseo
  never adds an ``interrupt`` to it (two would end the next turn early).
- As root, ``--allow-dangerously-skip-permissions`` (needed to switch to ``bypassPermissions``
  later) makes Claude Code exit at start-up unless ``IS_SANDBOX=1`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.events import (
    AgentEvent,
    CompactionItem,
    DenyResolution,
    PermissionRequested,
    PermissionResolution,
    PermissionResolved,
    ThreadStarted,
    Timeline,
    TimelineItem,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    UsageReported,
    UserMessageItem,
)
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    EventSink,
    PersistenceHandle,
    PromptImage,
    SessionConfig,
    SlashCommand,
)
from paseo_hookspecs.process import AgentProcess, ProcessLauncher
from paseo_hookspecs.turns import Turn

from paseo_claude import mapping
from paseo_claude.modes import check_mode, check_thinking
from paseo_claude.protocol import ControlChannel, ControlError, LaunchSpec, ProcessExited, messages
from paseo_claude.stream import StreamTranslator, api_retry_item
from paseo_claude.transcript import read_history
from paseo_claude.turns import ClaudeTurns

log = logging.getLogger("paseo_claude.session")

CONTROL_TIMEOUT = 30.0
"""Bound on Claude Code's answer to one of Paseo's control requests."""

INTERRUPT_GRACE = 15.0
"""After an interrupt, how long to wait for Claude Code's ``result`` before ending the turn."""

CLOSE_GRACE = 3.0
"""How long a closing Claude Code gets to exit on its own (it flushes its transcript)."""


class ClaudeSession(AgentSession):
    """A live Claude Code conversation. Create with :meth:`start`."""

    def __init__(
        self, spec: LaunchSpec, config: SessionConfig, sink: EventSink, process: AgentProcess
    ) -> None:
        self._spec = spec
        self._provider = spec.provider_id
        self._config = config
        self._sink = sink
        self._process = process
        self._session_id = spec.session_id
        self._model = spec.model
        self._mode = spec.mode_id
        self._thinking = spec.thinking
        self._version: str | None = None
        self._commands: list[SlashCommand] = []
        # A resumed conversation has a transcript already; a new one has one after a prompt.
        self._has_transcript = spec.resumed
        self._thread_announced = False

        self._emit_lock = asyncio.Lock()
        self._channel = ControlChannel(process)
        self._stream = StreamTranslator(config.cwd)
        self._turns = ClaudeTurns(self._provider)
        self._watchdog: asyncio.Task[None] | None = None
        self._closing = False
        self._exited = False
        self._exit_code: int | None = None
        self._reader: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ start-up

    @classmethod
    async def start(
        cls, spec: LaunchSpec, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> ClaudeSession:
        """Spawn Claude Code and complete the ``initialize`` handshake.

        Raises ``Unavailable`` when the program is missing, exits during start-up (with the
        tail of its stderr) or does not answer within ``spec.startup_timeout`` seconds.
        """
        try:
            process = await launcher.launch(
                spec.argv,
                cwd=config.cwd,
                env=spec.env,
                provider=spec.provider_id,
                agent_id=config.agentId,
            )
        except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
            missing_cwd = isinstance(exc, NotADirectoryError) or (
                exc.filename is not None and str(exc.filename) == config.cwd
            )
            if missing_cwd:
                raise Unavailable(
                    f"cannot start Claude Code in {config.cwd}: {exc.strerror or exc}; "
                    "create the directory or pick another cwd"
                ) from exc
            raise Unavailable(
                f"cannot run Claude Code ({spec.argv[0]}): {exc.strerror or exc}; "
                "install @anthropic-ai/claude-code (npm i -g @anthropic-ai/claude-code) "
                f"or set agents.providers.{spec.provider_id}.command in config.json"
            ) from exc
        session = cls(spec, config, sink, process)
        session._reader = asyncio.create_task(session._read_loop())
        try:
            answer = await session._channel.request({"subtype": "initialize"}, spec.startup_timeout)
        except TimeoutError:
            await session._abandon()
            raise Unavailable(
                f"Claude Code did not answer its start-up handshake within "
                f"{spec.startup_timeout:.0f}s; check that `{spec.argv[0]} --version` works "
                f"and see its stderr: {session._stderr_tail() or '(empty)'}"
            ) from None
        except (ProcessExited, ControlError) as exc:
            await session._abandon()
            raise Unavailable(session._startup_failure(exc)) from None
        except BaseException:
            await session._abandon()
            raise
        session._commands = mapping.slash_commands(answer)
        return session

    def _startup_failure(self, exc: Exception) -> str:
        refused = str(exc) if isinstance(exc, ControlError) else None
        stderr = self._stderr_tail()
        return mapping.startup_failure(self._provider, refused, self._exit_code, stderr)

    async def _abandon(self) -> None:
        self._closing = True
        await self._process.terminate(grace=1.0)
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._reader), 10.0)

    # ------------------------------------------------------------------ properties

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def persistence_handle(self) -> PersistenceHandle | None:
        if not self._has_transcript:
            return None
        return PersistenceHandle(
            provider=self._provider,
            sessionId=self._session_id,
            nativeHandle=self._session_id,
            metadata={"cwd": self._config.cwd},
        )

    def commands(self) -> list[SlashCommand]:
        return list(self._commands)

    async def history(self) -> list[TimelineItem] | None:
        # The program's own environment decides where its transcripts are.
        env = {**os.environ, **self._spec.env}
        return await asyncio.to_thread(read_history, env, self._session_id)

    def runtime_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "sessionId": self._session_id,
            "model": self._model,
            "modeId": self._mode,
            "thinkingOptionId": self._thinking,
            "pid": self._process.pid,
        }
        if self._version:
            info["claudeCodeVersion"] = self._version
        return info

    def diagnostics(self) -> str:
        parts = []
        retries = self._turns.retry_summary()
        if retries:
            parts.append(retries)
        stderr = self._stderr_tail()
        if stderr:
            parts.append(f"stderr: {stderr}")
        return "\n".join(parts)

    def _stderr_tail(self) -> str:
        return self._process.stderr_tail(2000).strip()

    # ------------------------------------------------------------------ turns

    async def prompt(self, text: str, *, message_id: str) -> None:
        await self._prompt(text, text, message_id)

    async def prompt_with_images(
        self, text: str, images: list[PromptImage], *, message_id: str
    ) -> None:
        # Anthropic Messages content blocks, the images first (as Anthropic advises); Claude
        # Code passes them on to the model.
        blocks: list[dict[str, Any]] = [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": image.mediaType, "data": image.data},
            }
            for image in images
        ]
        await self._prompt(text, [*blocks, {"type": "text", "text": text}], message_id)

    async def _prompt(
        self, text: str, content: str | list[dict[str, Any]], message_id: str
    ) -> None:
        if self._exited or self._closing:
            raise Unavailable(
                f"Claude Code is no longer running (exit code {self._exit_code}); "
                "resume the agent to continue the conversation"
            )
        turn = self._turns.begin()
        line = {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": None,
            "session_id": self._session_id,
        }
        # Holding the lock across the write keeps turn_started and the user message ahead of
        # anything Claude Code prints in reply.
        async with self._emit_lock:
            await self._deliver(TurnStarted(provider=self._provider, turnId=str(turn.number)))
            await self._deliver(self._timeline(UserMessageItem(text=text, messageId=message_id)))
            try:
                await self._process.write_line(line)
            except (BrokenPipeError, ConnectionResetError):
                self._turns.finish(turn)
                self._turns.settle(turn)
                await self._deliver(
                    TurnFailed(
                        provider=self._provider,
                        error="Claude Code stopped before it could take the prompt; "
                        "resume the agent to continue",
                        code="process_exited",
                        diagnostic=self._stderr_tail() or None,
                    )
                )
                return
        self._has_transcript = True

    async def interrupt(self) -> None:
        turn = self._turns.current
        if turn is None or self._exited or not self._turns.interrupt():
            return
        # A pending permission prompt is withdrawn by Claude Code itself
        # (control_cancel_request), so the interrupt alone ends the turn.
        with contextlib.suppress(TimeoutError, ProcessExited, ControlError):
            await self._channel.request({"subtype": "interrupt"}, CONTROL_TIMEOUT)
        if self._turns.current is turn and self._watchdog is None:
            self._watchdog = asyncio.create_task(self._interrupt_watchdog(turn))

    async def _interrupt_watchdog(self, turn: Turn) -> None:
        # Claude Code answers an interrupt with a result almost at once; if it does not, the
        # turn must still end so the agent can take a new prompt.
        try:
            await asyncio.sleep(INTERRUPT_GRACE)
            if self._turns.current is turn:
                log.warning("Claude Code sent no result %.0fs after an interrupt", INTERRUPT_GRACE)
                await self._end_turn(TurnCanceled(provider=self._provider, reason="interrupted"))
        finally:
            self._watchdog = None

    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        answer = self._turns.answer(request_id, resolution)
        try:
            await self._channel.answer(request_id, answer)
        except (BrokenPipeError, ConnectionResetError):
            raise Unavailable("Claude Code is no longer running; the request lapsed") from None
        await self._emit(
            PermissionResolved(provider=self._provider, requestId=request_id, resolution=resolution)
        )

    # ------------------------------------------------------------------ settings

    async def set_mode(self, mode_id: str) -> None:
        check_mode(mode_id)
        if mode_id == "bypassPermissions" and not self._spec.bypass_allowed:
            raise InvalidParams(
                "as root Claude Code allows bypassPermissions only when the agent's environment "
                f"holds IS_SANDBOX=1 (agents.providers.{self._provider}.env)"
            )
        await self._setting({"subtype": "set_permission_mode", "mode": mode_id})
        self._mode = mode_id

    async def set_model(self, model: str) -> None:
        await self._setting({"subtype": "set_model", "model": model})
        self._model = model

    async def set_thinking(self, option_id: str) -> None:
        check_thinking(option_id)
        await self._setting(
            {"subtype": "apply_flag_settings", "settings": {"effortLevel": option_id}}
        )
        self._thinking = option_id

    async def _setting(self, request: dict[str, Any]) -> None:
        if self._exited or self._closing:
            raise Unavailable("Claude Code is no longer running; resume the agent first")
        try:
            await self._channel.request(request, CONTROL_TIMEOUT)
        except ControlError as exc:
            raise InvalidParams(f"Claude Code refused {request['subtype']}: {exc}") from None
        except (TimeoutError, ProcessExited):
            raise Unavailable(
                f"Claude Code did not answer {request['subtype']}; see the agent's diagnostics"
            ) from None

    # ------------------------------------------------------------------ close

    async def close(self) -> None:
        if not self._closing:
            self._closing = True
            if self._watchdog is not None:
                self._watchdog.cancel()
            # Closing stdin lets Claude Code finish writing its transcript and exit 0; the
            # group is killed whatever happens.
            self._process.close_stdin()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.wait(), CLOSE_GRACE)
        await self._process.terminate(grace=2.0)
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._reader), 10.0)
        if self._turns.active:
            await self._end_turn(TurnCanceled(provider=self._provider, reason="closed"))
        self._turns.forget_permissions()

    # ------------------------------------------------------------------ plumbing

    async def _emit(self, event: AgentEvent) -> None:
        async with self._emit_lock:
            await self._deliver(event)

    async def _deliver(self, event: AgentEvent) -> None:
        try:
            await self._sink(event)
        except Exception:
            # The sink is the manager's; a failure there must not kill the protocol reader.
            log.exception("event sink failed on %s", getattr(event, "type", "?"))

    def _timeline(self, item: TimelineItem) -> Timeline:
        return Timeline(provider=self._provider, item=item)

    async def _end_turn(self, event: TurnCompleted | TurnFailed | TurnCanceled) -> None:
        turn = self._turns.finish()
        if turn is None:
            return
        # A new prompt may start while this turn's end is delivered (the lock keeps order).
        self._turns.settle(turn)
        await self._emit_items(self._stream.cancel_running())
        self._turns.forget_permissions()
        if self._watchdog is not None and self._watchdog is not asyncio.current_task():
            self._watchdog.cancel()
        await self._emit(event)

    async def _read_loop(self) -> None:
        try:
            async for message in messages(self._process):
                try:
                    await self._dispatch(message)
                except Exception:
                    log.exception("could not handle a %s message", message.get("type"))
        except Exception:
            log.exception("reading Claude Code's output failed")
        finally:
            await self._on_exit()

    async def _on_exit(self) -> None:
        # Reap the whole group (and finish draining stderr) before describing the exit. The
        # exit code comes from wait(): a concurrent terminate() (close) may be the one reaping.
        await self._process.terminate(grace=1.0)
        self._exit_code = await self._process.wait()
        self._exited = True
        self._channel.fail_all()
        if self._turns.active and not self._closing:
            await self._end_turn(
                TurnFailed(
                    provider=self._provider,
                    error=f"Claude Code exited unexpectedly (exit code {self._exit_code}); "
                    "send the prompt again to restart it from the saved conversation",
                    code="process_exited",
                    diagnostic=self.diagnostics() or None,
                )
            )

    async def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "control_response":
            self._channel.resolve(message.get("response"))
        elif kind == "control_request":
            await self._on_control_request(message)
        elif kind == "control_cancel_request":
            await self._on_control_cancel(message)
        elif kind == "system":
            await self._on_system(message)
        elif message.get("parent_tool_use_id"):
            # Inside a sub-agent: its work is summarised by the parent's sub_agent tool call.
            return
        elif kind == "stream_event":
            await self._emit_items(self._stream.stream_event(message.get("event")))
        elif kind == "assistant":
            await self._emit_items(self._stream.assistant(message))
            usage = self._turns.reported(message)
            if usage is not None:
                # Each model call's tokens as they come: the daemon checks budgets mid-turn.
                await self._emit(UsageReported(provider=self._provider, usage=usage))
        elif kind == "user":
            await self._emit_items(self._stream.user(message, canceling=self._turns.canceling))
        elif kind == "result":
            await self._on_result(message)

    async def _on_control_request(self, message: dict[str, Any]) -> None:
        request_id = str(message.get("request_id"))
        request = message.get("request")
        if isinstance(request, Mapping) and request.get("subtype") == "can_use_tool":
            permission = self._turns.asked(request_id, request)
            await self._emit(PermissionRequested(provider=self._provider, request=permission))
            return
        # Hooks, SDK MCP servers and elicitations are not configured by Paseo: refuse them
        # rather than leave Claude Code waiting.
        subtype = request.get("subtype") if isinstance(request, Mapping) else None
        await self._channel.refuse(request_id, f"Paseo does not handle {subtype!r} requests")

    async def _on_control_cancel(self, message: dict[str, Any]) -> None:
        request_id = str(message.get("request_id"))
        if self._turns.withdrawn(request_id):
            await self._emit(
                PermissionResolved(
                    provider=self._provider,
                    requestId=request_id,
                    resolution=DenyResolution(message="withdrawn by Claude Code"),
                )
            )

    async def _on_system(self, message: dict[str, Any]) -> None:
        subtype = message.get("subtype")
        if subtype == "init":
            session_id = message.get("session_id")
            if isinstance(session_id, str) and session_id:
                self._session_id = session_id
            if isinstance(message.get("model"), str):
                self._model = message["model"]
            if isinstance(message.get("permissionMode"), str):
                self._mode = message["permissionMode"]
            if isinstance(message.get("claude_code_version"), str):
                self._version = message["claude_code_version"]
            if not self._thread_announced:
                self._thread_announced = True
                await self._emit(ThreadStarted(provider=self._provider, sessionId=self._session_id))
        elif subtype == "status":
            if isinstance(message.get("permissionMode"), str):
                self._mode = message["permissionMode"]
        elif subtype == "api_retry":
            self._turns.retried(message)
            await self._emit(self._timeline(api_retry_item(message)))
        elif subtype == "compact_boundary":
            await self._emit(self._timeline(CompactionItem()))

    async def _emit_items(self, items: list[TimelineItem]) -> None:
        for item in items:
            await self._emit(self._timeline(item))

    async def _on_result(self, message: dict[str, Any]) -> None:
        turn = self._turns.current
        if turn is None:
            log.debug("result outside a turn ignored")
            return
        items, event = self._turns.result(turn, message, self.diagnostics() or None)
        await self._emit_items(items)
        self._stream.end_turn()
        await self._end_turn(event)
