"""The example agent program: a tiny coding agent on stdio.

Run as ``python -m paseo_example_provider.agent``. It stands for the program a real
provider drives (Claude Code, Codex, an ACP agent) and uses the standard library only. It talks
to an OpenAI-compatible Chat Completions endpoint, streaming:

- ``EXAMPLE_AGENT_BASE_URL`` (required), e.g. ``https://api.openai.com/v1``;
- ``EXAMPLE_AGENT_API_KEY`` (optional), sent as a bearer token;
- ``EXAMPLE_AGENT_STATE_DIR`` (optional), where conversations are kept, one JSON file per
  session (default ``~/.local/state/paseo-example-agent``), so a session can be reopened.

It offers the model one tool, ``write`` (``path``, ``content``), which in mode ``ask`` needs the
client's permission. Its protocol is line-framed JSON-RPC 2.0 on stdin/stdout:

client → agent requests
    ``session/open`` ``{sessionId?, model?, mode?, systemPrompt?}`` → ``{sessionId, resumed}``
    (error ``-32004`` when ``sessionId`` names no stored conversation);
    ``session/configure`` ``{model?, mode?}`` → ``{}``;
    ``turn/start`` ``{text, turnId}`` → ``{}`` (the turn then runs in the background; every
    notification of the turn below carries its ``turnId``).
client → agent notification
    ``turn/cancel``: end the running turn now (its partial reply is kept in the history).
agent → client notifications
    ``message/delta`` ``{kind: "text"|"reasoning", messageId, text}``;
    ``tool/update`` ``{callId, name, path, content, status, error?}``;
    ``turn/ended`` ``{stopReason: "completed"|"cancelled"|"failed", error?, usage?}``.
agent → client request
    ``permission/ask`` ``{callId, path, content}`` → ``{allow, message?, content?}`` (``content``:
    what the user edited the file's content to).

Threads: the main thread reads stdin and answers requests; each turn runs in a worker thread
(the HTTP stream blocks). One lock orders everything written to stdout, and once ``turn/ended``
is written nothing more of that turn is (see :meth:`Agent.notify`).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

MODES = ("ask", "auto")
"""``ask``: every write needs the client's permission; ``auto``: writes go ahead."""

MAX_ROUNDS = 8
"""Model calls per turn (each tool result is sent back): a runaway tool loop ends here."""

REQUEST_TIMEOUT = 300.0
"""Seconds the endpoint may stay silent before the turn fails."""

# JSON-RPC error codes: the standard ones, and three of this protocol's own.
METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32601, -32602, -32603
BUSY, NOT_CONFIGURED, NOT_FOUND = -32002, -32003, -32004

WRITE_TOOL = {
    "type": "function",
    "function": {
        "name": "write",
        "description": "Create or overwrite a text file (path relative to the working directory)",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
}

_SESSION_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")


class AgentError(Exception):
    """A request the agent refuses: answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class ModelError(Exception):
    """The endpoint could not be reached or answered with an error: the turn fails."""


def write_atomic(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` so that a crash leaves the old file or the new, never half."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)  # the rename itself must survive a crash
    finally:
        os.close(directory)


class Turn:
    """One prompt being answered."""

    def __init__(self, turn_id: str) -> None:
        self.id = turn_id
        """The client's id for the turn, echoed in each of its notifications."""
        self.cancelled = threading.Event()
        self.over = False
        """``turn/ended`` was written (guarded by the output lock)."""


class Agent:
    """The conversation, the running turn and the stdio protocol (see the module docstring)."""

    def __init__(self, environ: dict[str, str]) -> None:
        self.base_url = environ.get("EXAMPLE_AGENT_BASE_URL", "").rstrip("/")
        self.api_key = environ.get("EXAMPLE_AGENT_API_KEY", "")
        default_state = Path.home() / ".local" / "state" / "paseo-example-agent"
        self.state_dir = Path(environ.get("EXAMPLE_AGENT_STATE_DIR") or default_state)
        self.model = "gpt-4.1-mini"
        self.mode = "ask"
        self.session_id: str | None = None
        self.messages: list[dict[str, Any]] = []
        self.turn: Turn | None = None
        self.worker: threading.Thread | None = None
        self._out = threading.Lock()
        self._request_ids = iter(range(1, sys.maxsize))
        self._answers: dict[int, tuple[threading.Event, list[Any]]] = {}

    # -- output ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        with self._out:
            self._write(message)

    def _write(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    def notify(self, turn: Turn, method: str, params: dict[str, Any]) -> None:
        """Send a notification of ``turn``, unless the turn has already ended."""
        with self._out:
            if not turn.over:
                self._write({"method": method, "params": {"turnId": turn.id, **params}})

    def end_turn(self, turn: Turn, stop_reason: str, **details: Any) -> None:
        """Write ``turn/ended`` once; later ends of the same turn are ignored."""
        with self._out:
            if not turn.over:
                turn.over = True
                params = {"turnId": turn.id, "stopReason": stop_reason, **details}
                self._write({"method": "turn/ended", "params": params})

    # -- the main loop --------------------------------------------------------------------

    def serve(self) -> None:
        for line in sys.stdin.buffer:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if "method" in message and "id" in message:
                self._answer(message["id"], message["method"], params)
            elif "method" in message:
                if message["method"] == "turn/cancel":
                    self.cancel()
            elif "id" in message:
                self._resolve(message)
        # End of input: the client is gone; waiting permission questions get no answer.
        self.cancel()

    def _answer(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        handlers = {
            "session/open": self.open_session,
            "session/configure": self.configure,
            "turn/start": self.start_turn,
        }
        handler = handlers.get(method)
        if handler is None:
            error = {"code": METHOD_NOT_FOUND, "message": f"unknown method {method}"}
            self.send({"id": request_id, "error": error})
            return
        try:
            self.send({"id": request_id, "result": handler(params)})
        except AgentError as exc:
            self.send({"id": request_id, "error": {"code": exc.code, "message": str(exc)}})
        except Exception as exc:  # noqa: BLE001 - a bad request must not end the program
            error = {"code": INTERNAL_ERROR, "message": f"{method} failed: {exc!r}"}
            self.send({"id": request_id, "error": error})

    def _resolve(self, message: dict[str, Any]) -> None:
        waiting = self._answers.pop(message["id"], None)
        if waiting is not None:
            event, slot = waiting
            slot.append(message.get("result"))
            event.set()

    # -- requests -------------------------------------------------------------------------

    def open_session(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self.base_url:
            raise AgentError(
                NOT_CONFIGURED,
                "EXAMPLE_AGENT_BASE_URL is not set: point it at an OpenAI-compatible endpoint "
                "(e.g. https://api.openai.com/v1) and set EXAMPLE_AGENT_API_KEY",
            )
        self.configure(params)
        wanted = params.get("sessionId")
        if wanted is None:
            self.session_id = uuid.uuid4().hex
            prompt = params.get("systemPrompt")
            self.messages = [{"role": "system", "content": prompt}] if prompt else []
            return {"sessionId": self.session_id, "resumed": False}
        if not isinstance(wanted, str) or not _SESSION_ID.match(wanted):
            raise AgentError(INVALID_PARAMS, f"malformed session id {wanted!r}")
        try:
            stored = json.loads(self._session_file(wanted).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AgentError(NOT_FOUND, f"no stored conversation {wanted}") from None
        except (OSError, ValueError) as exc:
            raise AgentError(NOT_FOUND, f"conversation {wanted} is unreadable: {exc}") from None
        messages = stored.get("messages") if isinstance(stored, dict) else None
        if not isinstance(messages, list):
            raise AgentError(NOT_FOUND, f"conversation {wanted} is unreadable: no messages")
        self.session_id, self.messages = wanted, messages
        return {"sessionId": wanted, "resumed": True}

    def configure(self, params: dict[str, Any]) -> dict[str, Any]:
        mode = params.get("mode")
        if mode is not None and mode not in MODES:
            raise AgentError(INVALID_PARAMS, f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        self.mode = mode or self.mode
        self.model = params.get("model") or self.model
        return {}

    def start_turn(self, params: dict[str, Any]) -> dict[str, Any]:
        text = params.get("text")
        if not isinstance(text, str):
            raise AgentError(INVALID_PARAMS, "turn/start needs a text")
        if self.session_id is None:
            raise AgentError(INVALID_PARAMS, "open a session first (session/open)")
        if self.turn is not None and not self.turn.over:
            raise AgentError(BUSY, "a turn is already running")
        self.turn = turn = Turn(str(params.get("turnId", "")))
        previous = self.worker
        self.worker = threading.Thread(
            target=self._run_turn, args=(turn, text, previous), daemon=True
        )
        self.worker.start()
        return {}

    def cancel(self) -> None:
        """End the running turn now; its worker notices and stops at the next chunk."""
        turn = self.turn
        if turn is None or turn.over:
            return
        turn.cancelled.set()
        for event, _slot in list(self._answers.values()):
            event.set()  # an open permission question reads as "not allowed"
        self.end_turn(turn, "cancelled")

    # -- a turn (worker thread) -----------------------------------------------------------

    def _run_turn(self, turn: Turn, text: str, previous: threading.Thread | None) -> None:
        if previous is not None:
            previous.join()  # a cancelled turn's worker records its partial reply first
        self.messages.append({"role": "user", "content": text})
        usage = {"inputTokens": 0, "outputTokens": 0}
        try:
            self._answer_prompt(turn, usage)
        except ModelError as exc:
            self.end_turn(turn, "failed", error=str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug ends the turn, not the program
            self.end_turn(turn, "failed", error=f"the example agent failed: {exc!r}")
        try:
            self._save()
        except OSError as exc:
            error = f"cannot save the conversation in {self.state_dir}: {exc}"
            self.end_turn(turn, "failed", error=error)
        self.end_turn(turn, "completed", usage=usage)

    def _answer_prompt(self, turn: Turn, usage: dict[str, int]) -> None:
        """Call the model, run the tools it asks for and send their results back, until it
        answers without a tool call (or the turn is cancelled)."""
        for _round in range(MAX_ROUNDS):
            calls = self._stream_reply(turn, usage)
            for call in calls:
                result = self._run_tool(turn, call)
                self.messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": result}
                )
            if not calls or turn.cancelled.is_set():
                return
        self.end_turn(turn, "failed", error=f"gave up after {MAX_ROUNDS} model calls")

    def _stream_reply(self, turn: Turn, usage: dict[str, int]) -> list[dict[str, Any]]:
        """One streamed model call; returns the tool calls it asked for."""
        body = {
            "model": self.model,
            "messages": self.messages,
            "tools": [WRITE_TOOL],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = f"{self.base_url}/chat/completions"
        if not url.startswith(("http://", "https://")):
            raise ModelError(f"EXAMPLE_AGENT_BASE_URL must be an http(s) URL, not {url!r}")
        # The scheme is checked above, which is what S310 asks for.
        request = urllib.request.Request(url, json.dumps(body).encode(), headers)  # noqa: S310
        try:
            response = urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT)  # noqa: S310
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:300]
            raise ModelError(f"the model endpoint answered HTTP {exc.code}: {detail}") from None
        except OSError as exc:
            raise ModelError(
                f"cannot reach the model endpoint {url}: {exc}; check EXAMPLE_AGENT_BASE_URL"
            ) from None
        message_id = uuid.uuid4().hex
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        with response:
            for raw in response:
                if turn.cancelled.is_set():
                    break
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:") or line == "data: [DONE]":
                    continue
                try:
                    chunk = json.loads(line[5:])
                except ValueError:
                    continue  # a malformed event: the rest of the stream may still be fine
                if chunk.get("usage"):
                    usage["inputTokens"] += chunk["usage"].get("prompt_tokens", 0)
                    usage["outputTokens"] += chunk["usage"].get("completion_tokens", 0)
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    self._stream_delta(turn, message_id, delta, text, calls)
        reply: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
        if turn.cancelled.is_set():
            calls = {}  # an interrupted reply asks for nothing
        if calls:
            reply["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls.values()
            ]
        self.messages.append(reply)
        return [calls[index] for index in sorted(calls)]

    def _stream_delta(
        self,
        turn: Turn,
        message_id: str,
        delta: dict[str, Any],
        text: list[str],
        calls: dict[int, dict[str, str]],
    ) -> None:
        if delta.get("reasoning_content"):
            reasoning = delta["reasoning_content"]
            params = {"kind": "reasoning", "messageId": f"{message_id}-r", "text": reasoning}
            self.notify(turn, "message/delta", params)
        if delta.get("content"):
            text.append(delta["content"])
            params = {"kind": "text", "messageId": message_id, "text": delta["content"]}
            self.notify(turn, "message/delta", params)
        for part in delta.get("tool_calls") or []:
            call = calls.setdefault(part.get("index", 0), {"id": "", "name": "", "arguments": ""})
            function = part.get("function") or {}
            call["id"] = part.get("id") or call["id"]
            call["name"] += function.get("name") or ""
            call["arguments"] += function.get("arguments") or ""

    def _run_tool(self, turn: Turn, call: dict[str, str]) -> str:
        """Run one tool call; returns what the model is told."""
        if call["name"] != "write":
            return f"there is no tool {call['name']!r}; the only tool is write"
        try:
            arguments = json.loads(call["arguments"] or "{}")
            path, content = str(arguments["path"]), str(arguments["content"])
        except (ValueError, KeyError, TypeError):
            return f"malformed arguments for write: {call['arguments'][:200]}"
        update = {"callId": call["id"], "name": "write", "path": path, "content": content}
        self.notify(turn, "tool/update", {**update, "status": "running"})
        if self.mode == "ask":
            answer = self._ask_permission(turn, call["id"], path, content)
            if turn.cancelled.is_set():
                return "the user interrupted the turn before the file was written"
            if not answer.get("allow"):
                reason = answer.get("message") or "no reason given"
                error = f"the user denied writing {path}: {reason}"
                self.notify(turn, "tool/update", {**update, "status": "failed", "error": error})
                return f"{error}. Do not retry; ask the user what to do instead."
            content = str(answer.get("content", content))  # the user may have edited it
        target = Path.cwd() / path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, content, 0o666)  # an ordinary file: the umask applies
        except OSError as exc:
            error = f"writing {path} failed: {exc}"
            self.notify(turn, "tool/update", {**update, "status": "failed", "error": error})
            return error
        self.notify(turn, "tool/update", {**update, "status": "completed"})
        return f"wrote {len(content)} characters to {path}"

    def _ask_permission(self, turn: Turn, call_id: str, path: str, content: str) -> dict[str, Any]:
        """Ask the client and wait for its answer (or for the turn to be cancelled)."""
        request_id = next(self._request_ids)
        event = threading.Event()
        slot: list[Any] = []
        self._answers[request_id] = (event, slot)
        params = {"callId": call_id, "path": path, "content": content}
        with self._out:
            if turn.over:
                return {}
            self._write({"id": request_id, "method": "permission/ask", "params": params})
        event.wait()  # set by the answer, by cancel() or by the end of stdin
        self._answers.pop(request_id, None)
        answer = slot[0] if slot else None
        return answer if isinstance(answer, dict) else {}

    def _save(self) -> None:
        assert self.session_id is not None
        self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        text = json.dumps({"sessionId": self.session_id, "messages": self.messages})
        # 0600: a conversation may quote anything the user pasted.
        write_atomic(self._session_file(self.session_id), text, 0o600)

    def _session_file(self, session_id: str) -> Path:
        return self.state_dir / f"{session_id}.json"


def main() -> None:
    Agent(dict(os.environ)).serve()


if __name__ == "__main__":
    main()
