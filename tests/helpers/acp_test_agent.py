"""A tiny but real ACP agent (built on the ``agent-client-protocol`` SDK) for the tests.

Run it as a program (``python acp_test_agent.py``); it speaks ACP on stdio and answers every
prompt from the prompt text alone, with the fake model server's directive grammar
(:data:`paseo.testing.fake_model.DIRECTIVE_HELP`, parsed by the same functions):

- plain text → ``ok: <prompt>`` streamed in chunks; ``[[reply:TEXT]]`` → TEXT;
- ``[[think:T]]`` → a thought chunk first;
- ``[[shell:CMD]]`` → a tool call that asks ``session/request_permission``; allowed → runs CMD in
  the session's cwd and answers ``tool said: <output>``; denied → the call fails, nothing runs;
- ``[[write:PATH:CONTENT]]`` → the same with a file write (PATH relative to the cwd);
- ``[[long:N]]`` / ``[[slow:N]]`` / ``[[slow:N:SECONDS]]`` → N chunks (slow ones honour
  ``session/cancel`` between chunks, ending the turn with ``stopReason: cancelled``);
- ``[[error:STATUS:MSG]]`` → the prompt request fails with a JSON-RPC error carrying MSG.

Test-agent-only directives: ``[[crash]]`` exits the process mid-turn (code 3), and
``[[plan]]`` sends a two-entry plan update.

It advertises ``loadSession`` (unless ``ACP_TEST_AGENT_NO_LOAD=1``): each session's history
lives in a JSON file under ``$ACP_TEST_AGENT_STATE_DIR`` (default ``$HOME/.acp-test-agent``) and
``session/load`` replays it as ``user_message_chunk``/``agent_message_chunk`` updates. Modes
are ``default`` and ``plan`` (plan mode runs no tools) through ``modes``/``session/set_mode``;
model (``test-fast``, ``test-smart``) and thinking level (``off``, ``low``, ``high``) are config
options.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import acp
import acp.helpers
from acp import schema
from acp.exceptions import RequestError

from paseo.fs import atomic_write_json
from paseo.testing.fake_model.script import (
    DEFAULT_SLOW_DELAY,
    TEXT_CHUNK,
    decode_escapes,
    parse_directives,
    split_chunks,
    strip_directives,
)

STATE_DIR_VARIABLE = "ACP_TEST_AGENT_STATE_DIR"
NO_LOAD_VARIABLE = "ACP_TEST_AGENT_NO_LOAD"
AGENT_PATH = Path(__file__).resolve()

MODES = (("default", "Default", "Ask before running tools"), ("plan", "Plan", "Run no tools"))
MODELS = (("test-fast", "Test fast"), ("test-smart", "Test smart"))
THINKING = (("off", "Off"), ("low", "Low"), ("high", "High"))


def command() -> list[str]:
    """The argv that runs this agent with the current interpreter."""
    return [sys.executable, str(AGENT_PATH)]


def _state_dir() -> Path:
    configured = os.environ.get(STATE_DIR_VARIABLE)
    return Path(configured) if configured else Path.home() / ".acp-test-agent"


def _chunks(text: str) -> list[str]:
    return [text[i : i + TEXT_CHUNK] for i in range(0, len(text), TEXT_CHUNK)] or [""]


def _select(
    config_id: str, name: str, category: str, current: str, choices: tuple[tuple[str, str], ...]
) -> schema.SessionConfigOptionSelect:
    return schema.SessionConfigOptionSelect(
        id=config_id,
        name=name,
        category=category,
        type="select",
        current_value=current,
        options=[schema.SessionConfigSelectOption(value=v, name=n) for v, n in choices],
    )


class _Session:
    def __init__(self, session_id: str, cwd: str, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.id = session_id
        self.cwd = cwd
        self.mode: str = state.get("mode", "default")
        self.model: str = state.get("model", MODELS[0][0])
        self.thinking: str = state.get("thinking", THINKING[0][0])
        self.history: list[dict[str, str]] = list(state.get("history", []))
        self.cancel = asyncio.Event()

    def path(self) -> Path:
        return _state_dir() / f"{self.id}.json"

    async def save(self) -> None:
        document = {
            "sessionId": self.id,
            "cwd": self.cwd,
            "mode": self.mode,
            "model": self.model,
            "thinking": self.thinking,
            "history": self.history,
        }
        await asyncio.to_thread(_state_dir().mkdir, parents=True, exist_ok=True)
        await asyncio.to_thread(atomic_write_json, self.path(), document)

    def modes(self) -> schema.SessionModeState:
        return schema.SessionModeState(
            current_mode_id=self.mode,
            available_modes=[schema.SessionMode(id=i, name=n, description=d) for i, n, d in MODES],
        )

    def config_options(self) -> list[Any]:
        return [
            _select("model", "Model", "model", self.model, MODELS),
            _select("thinking", "Thinking", "thought_level", self.thinking, THINKING),
        ]


class _Canceled(Exception):
    """The client sent session/cancel."""


class TestAgent:
    """The agent side; one instance serves one connection (one client)."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._sessions: dict[str, _Session] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=os.environ.get(NO_LOAD_VARIABLE) != "1"
            ),
            agent_info=schema.Implementation(name="paseo-acp-test-agent", version="1"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **_: Any
    ) -> schema.NewSessionResponse:
        session = _Session(uuid.uuid4().hex, cwd)
        self._sessions[session.id] = session
        await session.save()
        return schema.NewSessionResponse(
            session_id=session.id, modes=session.modes(), config_options=session.config_options()
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> schema.LoadSessionResponse:
        path = _state_dir() / f"{session_id}.json"
        try:
            state = json.loads(await asyncio.to_thread(path.read_text))
        except (OSError, ValueError):
            raise RequestError.resource_not_found(str(path)) from None
        session = _Session(session_id, cwd, state)
        self._sessions[session_id] = session
        for entry in session.history:
            block = acp.text_block(entry["text"])
            update = (
                acp.update_user_message(block)
                if entry["role"] == "user"
                else acp.update_agent_message(block)
            )
            await self._conn.session_update(session_id, update)
        return schema.LoadSessionResponse(
            modes=session.modes(), config_options=session.config_options()
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> schema.SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in {m[0] for m in MODES}:
            raise RequestError.invalid_params({"modeId": mode_id})
        session.mode = mode_id
        await session.save()
        await self._conn.session_update(session_id, acp.helpers.update_current_mode(mode_id))
        return schema.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> schema.SetSessionConfigOptionResponse:
        session = self._session(session_id)
        choices = {"model": MODELS, "thinking": THINKING}.get(config_id)
        if choices is None or value not in {c[0] for c in choices}:
            raise RequestError.invalid_params({"configId": config_id, "value": value})
        setattr(session, config_id, value)
        await session.save()
        return schema.SetSessionConfigOptionResponse(config_options=session.config_options())

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancel.set()

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "reason": "unknown session"}
            )
        return session

    # ------------------------------------------------------------------ turns

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> schema.PromptResponse:
        session = self._session(session_id)
        session.cancel.clear()
        text = "".join(getattr(block, "text", "") for block in prompt)
        session.history.append({"role": "user", "text": text})
        await session.save()
        reply: list[str] = []
        try:
            await self._answer(session, text, reply)
            stop = "end_turn"
        except _Canceled:
            stop = "cancelled"
        finally:
            if reply:
                session.history.append({"role": "assistant", "text": "".join(reply)})
                await session.save()
        await self._send(
            session, schema.UsageUpdate(session_update="usage_update", used=len(text), size=100_000)
        )
        return schema.PromptResponse(
            stop_reason=stop,
            usage=schema.Usage(
                input_tokens=len(text),
                output_tokens=len("".join(reply)),
                total_tokens=len(text) + len("".join(reply)),
            ),
        )

    async def _send(self, session: _Session, update: Any) -> None:
        await self._conn.session_update(session.id, update)

    async def _say(
        self, session: _Session, chunks: list[str], reply: list[str], delay: float = 0.0
    ) -> None:
        message_id = f"msg_{uuid.uuid4().hex[:12]}"
        for index, chunk in enumerate(chunks):
            if session.cancel.is_set():
                raise _Canceled
            if delay and index:
                try:
                    await asyncio.wait_for(session.cancel.wait(), delay)
                    raise _Canceled
                except TimeoutError:
                    pass
            block = acp.text_block(chunk)
            await self._send(
                session,
                schema.AgentMessageChunk(
                    session_update="agent_message_chunk", content=block, message_id=message_id
                ),
            )
            reply.append(chunk)

    async def _answer(self, session: _Session, text: str, reply: list[str]) -> None:
        directives = parse_directives(text)
        first: dict[str, str | None] = {}
        for directive in directives:
            first.setdefault(directive.name, directive.argument)
        if "error" in first:
            status, _, message = (first["error"] or "500").partition(":")
            raise RequestError(
                -32603,
                message.strip() or f"fake model error {status.strip()}",
                {"status": status.strip()},
            )
        if "crash" in first:
            sys.stdout.flush()
            os._exit(3)
        if "think" in first:
            await self._send(
                session, acp.update_agent_thought_text(decode_escapes(first["think"] or ""))
            )
        if "plan" in first:
            await self._send(
                session,
                acp.update_plan(
                    [
                        acp.plan_entry("look around", status="completed"),
                        acp.plan_entry("answer", status="in_progress"),
                    ]
                ),
            )
        for directive in directives:
            if directive.name in ("shell", "write"):
                result = await self._tool(session, directive.name, directive.argument or "")
                await self._say(session, _chunks(f"tool said: {result[:500]}"), reply)
                return
        reply_text = decode_escapes(first["reply"] or "") if "reply" in first else None
        delay = 0.0
        count: int | None = None
        if "slow" in first:
            count_text, _, delay_text = (first["slow"] or "").partition(":")
            count = _int(count_text, 10)
            delay = _float(delay_text, DEFAULT_SLOW_DELAY) if delay_text else DEFAULT_SLOW_DELAY
        elif "long" in first:
            count = _int(first["long"], 100)
        if count is not None:
            chunks = (
                list(split_chunks(reply_text, count))
                if reply_text
                else [("" if i == 1 else " ") + f"chunk {i}" for i in range(1, count + 1)]
            )
        else:
            chunks = _chunks(
                reply_text if reply_text is not None else f"ok: {strip_directives(text)}"
            )
        await self._say(session, chunks, reply, delay)

    async def _tool(self, session: _Session, kind: str, argument: str) -> str:
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        if kind == "shell":
            raw_input: dict[str, Any] = {"command": argument}
            start = acp.start_tool_call(
                call_id, argument, kind="execute", status="pending", raw_input=raw_input
            )
        else:
            path, _, content = argument.partition(":")
            path, content = path.strip(), decode_escapes(content)
            raw_input = {"file_path": path, "content": content}
            start = acp.start_tool_call(
                call_id,
                f"Write {path}",
                kind="edit",
                status="pending",
                raw_input=raw_input,
                content=[acp.tool_diff_content(path, content)],
                locations=[schema.ToolCallLocation(path=path)],
            )
        await self._send(session, start)
        if session.mode == "plan":
            await self._send(
                session,
                acp.update_tool_call(
                    call_id, status="failed", raw_output="plan mode: no tools run"
                ),
            )
            return "plan mode: no tools run"
        options = [
            schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            schema.PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
            schema.PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
        ]
        tool_call = schema.ToolCallUpdate(
            tool_call_id=call_id,
            title=start.title,
            kind=start.kind,
            status="pending",
            raw_input=raw_input,
        )
        asking = asyncio.ensure_future(
            self._conn.request_permission(
                session_id=session.id, tool_call=tool_call, options=options
            )
        )
        canceled = asyncio.ensure_future(session.cancel.wait())
        done, _ = await asyncio.wait({asking, canceled}, return_when=asyncio.FIRST_COMPLETED)
        if asking not in done:
            asking.cancel()
            await self._send(
                session, acp.update_tool_call(call_id, status="failed", raw_output="canceled")
            )
            raise _Canceled
        canceled.cancel()
        outcome = asking.result().outcome
        allowed = getattr(outcome, "option_id", None) in ("allow", "always")
        if not allowed:
            await self._send(
                session,
                acp.update_tool_call(call_id, status="failed", raw_output="permission denied"),
            )
            if session.cancel.is_set() or outcome.outcome == "cancelled":
                raise _Canceled
            return "permission denied"
        await self._send(session, acp.update_tool_call(call_id, status="in_progress"))
        if kind == "shell":
            output, code = await _run_shell(argument, session.cwd, session.cancel)
            await self._send(
                session,
                acp.update_tool_call(
                    call_id,
                    status="completed" if code == 0 else "failed",
                    raw_output={"output": output, "exitCode": code},
                ),
            )
            return output
        target = Path(session.cwd, raw_input["file_path"])
        await asyncio.to_thread(target.write_text, raw_input["content"])
        await self._send(
            session,
            acp.update_tool_call(
                call_id, status="completed", raw_output=f"wrote {raw_input['file_path']}"
            ),
        )
        return f"wrote {raw_input['file_path']}"


async def _run_shell(command_text: str, cwd: str, cancel: asyncio.Event) -> tuple[str, int]:
    process = await asyncio.create_subprocess_shell(
        command_text, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    communicate = asyncio.ensure_future(process.communicate())
    canceled = asyncio.ensure_future(cancel.wait())
    done, _ = await asyncio.wait({communicate, canceled}, return_when=asyncio.FIRST_COMPLETED)
    if communicate not in done:
        process.kill()
        await communicate
        raise _Canceled
    canceled.cancel()
    stdout, _ = communicate.result()
    return stdout.decode("utf-8", "replace"), process.returncode or 0


def _int(value: str | None, default: int) -> int:
    try:
        return int((value or "").strip())
    except ValueError:
        return default


def _float(value: str, default: float) -> float:
    try:
        return float(value.strip())
    except ValueError:
        return default


def main() -> None:
    """Serve one client on stdio until stdin closes."""
    asyncio.run(acp.run_agent(TestAgent()))


if __name__ == "__main__":
    main()
