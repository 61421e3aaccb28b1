"""The fake model server: routes, request recording, and the sync/async lifecycles."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ._http import HttpRequest, ResponseWriter
from ._lifecycle import HttpLoopServer

# Named imports, not ``from . import anthropic``: that form imports the package, whose
# ``__init__`` imports this module.
from .anthropic import conversation as anthropic_conversation
from .anthropic import error_body as anthropic_error_body
from .anthropic import estimate_tokens
from .anthropic import message as anthropic_message
from .anthropic import stream_events as anthropic_stream_events
from .openai import (
    chat_completion,
    chat_conversation,
    chat_events,
    response_object,
    responses_conversation,
    responses_events,
)
from .openai import error_body as openai_error_body
from .script import Conversation, Reply, plan_reply

Api = Literal["anthropic", "count_tokens", "responses", "chat", "models", "probe", "unknown"]
Outcome = Literal["pending", "complete", "disconnected"]

# Models the fake lists on GET /v1/models (any model name is accepted on requests).
DEFAULT_MODELS: tuple[str, ...] = (
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
    "claude-opus-4-7",
    "gpt-5.5",
    "gpt-5.4-mini",
)

_GENERATION_APIS = frozenset({"anthropic", "responses", "chat"})


@dataclass
class RecordedRequest:
    """One request the fake received, as the tests see it.

    ``api`` names the endpoint family; ``reply`` summarises what the fake answered (``""`` for
    non-generation endpoints); ``outcome`` becomes ``complete`` once the whole answer was written
    or ``disconnected`` if the client went away mid-answer (an interrupted stream).
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    json: Any
    api: Api
    received_at: float
    prompt: str = ""
    reply: str = ""
    status: int = 0
    outcome: Outcome = "pending"
    stream: bool = False
    tool_results: tuple[str, ...] = field(default_factory=tuple)

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools the request offered (any API shape)."""
        names: list[str] = []
        tools = self.json.get("tools") if isinstance(self.json, dict) else None
        for tool in tools or []:
            if isinstance(tool, dict):
                function = tool.get("function")
                name = function.get("name") if isinstance(function, dict) else tool.get("name")
                if isinstance(name, str):
                    names.append(name)
        return names


def _classify(method: str, path: str) -> Api:
    path = path.rstrip("/") or "/"
    if method == "POST" and path.endswith("/messages/count_tokens"):
        return "count_tokens"
    if method == "POST" and path.endswith("/messages"):
        return "anthropic"
    if method == "POST" and path.endswith("/responses"):
        return "responses"
    if method == "POST" and path.endswith("/chat/completions"):
        return "chat"
    if method in ("GET", "HEAD") and (path.endswith("/models") or "/models/" in path):
        return "models"
    if method in ("GET", "HEAD") and path in ("/", "/v1", "/health", "/healthz"):
        return "probe"
    return "unknown"


class FakeModelServer(HttpLoopServer[RecordedRequest]):
    """A scripted model server on 127.0.0.1 speaking the Anthropic and OpenAI wire formats.

    Synchronous tests::

        with FakeModelServer() as fake:
            run_agent(env={"ANTHROPIC_BASE_URL": fake.url})
            assert fake.model_requests()[-1].prompt == "hello"

    Async code on its own loop::

        async with FakeModelServer() as fake:
            ...

    The synchronous form runs the server on a private event loop in a daemon thread. Answers
    are scripted by directives in the prompt (:data:`paseo.testing.fake_model.DIRECTIVE_HELP`).
    """

    thread_name = "fake-model-server"

    # --- addresses and records -------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL without a path (``ANTHROPIC_BASE_URL``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL with ``/v1`` (an OpenAI provider's ``base_url``)."""
        return f"{self.url}/v1"

    def model_requests(self) -> list[RecordedRequest]:
        """Only the generation requests (messages, responses, chat completions)."""
        return [r for r in self.requests if r.api in _GENERATION_APIS]

    def _record(self, request: HttpRequest) -> RecordedRequest:
        parsed: Any = None
        if request.body:
            with contextlib.suppress(ValueError):
                parsed = json.loads(request.body)
        record = RecordedRequest(
            method=request.method,
            path=request.path,
            query=request.query,
            headers=dict(request.headers),
            body=request.body,
            json=parsed,
            api=_classify(request.method, request.path),
            received_at=time.time(),
        )
        return self._keep(record)

    async def _handle(self, request: HttpRequest, response: ResponseWriter) -> None:
        record = self._record(request)
        body = record.json if isinstance(record.json, dict) else {}
        try:
            if record.api == "anthropic":
                await self._generate(
                    record, response, anthropic_conversation(body), "anthropic", body
                )
            elif record.api == "responses":
                await self._generate(
                    record, response, responses_conversation(body), "responses", body
                )
            elif record.api == "chat":
                await self._generate(record, response, chat_conversation(body), "chat", body)
            elif record.api == "count_tokens":
                tokens = estimate_tokens(request.body)
                await self._send_json(record, response, 200, {"input_tokens": tokens})
            elif record.api == "models":
                await self._send_json(record, response, 200, _models_body(request.path))
            elif record.api == "probe":
                record.status, record.outcome = 200, "complete"
                await response.send(200, b"ok", "text/plain")
            else:
                message = f"fake model server: no route for {request.method} {request.path}"
                error = {"type": "error", "error": {"type": "not_found_error", "message": message}}
                await self._send_json(record, response, 404, error)
        except (ConnectionError, asyncio.IncompleteReadError):
            record.outcome = "disconnected"
            raise

    async def _send_json(
        self, record: RecordedRequest, response: ResponseWriter, status: int, data: Any
    ) -> None:
        # Marked before the last bytes go out: a client may read them and look at the record
        # before this task runs again. A failed write turns it into "disconnected".
        record.status, record.outcome = status, "complete"
        await response.send(status, json.dumps(data).encode())

    async def _generate(
        self,
        record: RecordedRequest,
        response: ResponseWriter,
        conversation: Conversation,
        api: Api,
        body: dict[str, Any],
    ) -> None:
        reply = plan_reply(conversation)
        record.prompt = conversation.prompt
        record.tool_results = conversation.tool_results
        record.reply = reply.describe()
        record.stream = bool(body.get("stream"))
        input_tokens = estimate_tokens(record.body)
        model = conversation.model
        if reply.error_status is not None:
            error = (
                anthropic_error_body(reply.error_status, reply.error_message)
                if api == "anthropic"
                else openai_error_body(reply.error_status, reply.error_message)
            )
            await self._send_json(record, response, reply.error_status, error)
            return
        if not record.stream:
            if api == "anthropic":
                whole = anthropic_message(reply, model, input_tokens)
            elif api == "responses":
                whole = response_object(reply, model, input_tokens)
            else:
                whole = chat_completion(reply, model, input_tokens)
            await self._send_json(record, response, 200, whole)
            return
        events: Iterator[tuple[bytes, bool]]
        if api == "anthropic":
            events = anthropic_stream_events(reply, model, input_tokens)
        elif api == "responses":
            events = responses_events(reply, model, input_tokens)
        else:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            events = chat_events(reply, model, input_tokens, include_usage)
        await self._stream(record, response, events, reply)

    async def _stream(
        self,
        record: RecordedRequest,
        response: ResponseWriter,
        events: Iterator[tuple[bytes, bool]],
        reply: Reply,
    ) -> None:
        record.status = 200
        await response.start_stream(200, "text/event-stream")
        for data, is_text in events:
            if is_text and reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            if response.client_gone:
                record.outcome = "disconnected"
                return
            await response.write_chunk(data)
        record.outcome = "complete"
        await response.end_stream()


def _model(name: str) -> dict[str, Any]:
    # One shape that satisfies both the Anthropic and the OpenAI model readers.
    return {
        "id": name,
        "type": "model",
        "object": "model",
        "display_name": name,
        "created_at": "2025-01-01T00:00:00Z",
        "created": 1735689600,
        "owned_by": "fake",
    }


def _models_body(path: str) -> dict[str, Any]:
    _, _, name = path.rstrip("/").partition("/models/")
    if name:
        return _model(name)
    data = [_model(name) for name in DEFAULT_MODELS]
    return {
        "object": "list",
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"],
        "last_id": data[-1]["id"],
    }
