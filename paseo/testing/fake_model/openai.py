"""The OpenAI Responses and Chat Completions APIs: reading requests and writing answers."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from .script import Conversation, Reply, ToolSpec

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


def _text_of(content: Any) -> str:
    """Text of a message ``content`` (a string, or parts with ``text``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _function_tools(tools: Any) -> tuple[ToolSpec, ...]:
    specs: list[ToolSpec] = []
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        # Chat Completions nests the function; Responses flattens it.
        nested = tool.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else tool
        name = function.get("name")
        if isinstance(name, str):
            freeform = tool.get("type") == "custom"
            specs.append(ToolSpec(name, function.get("parameters") or {}, freeform=freeform))
        elif tool.get("type") == "local_shell":
            specs.append(ToolSpec("local_shell", {}))
    return tuple(specs)


def error_body(status: int, message: str) -> dict[str, Any]:
    """The OpenAI error JSON for ``status``."""
    kind = _ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


# --- Responses -----------------------------------------------------------------------------


def responses_conversation(body: dict[str, Any]) -> Conversation:
    """Reduce a Responses request to the scripting view."""
    raw = body.get("input")
    items: list[dict[str, Any]] = (
        [{"type": "message", "role": "user", "content": raw}]
        if isinstance(raw, str)
        else [i for i in raw or [] if isinstance(i, dict)]
    )
    prompt = ""
    results: list[str] = []
    trailing = True
    for item in reversed(items):
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            if trailing:
                results.append(_text_of(item.get("output")))
            continue
        if kind == "message" and item.get("role") == "user":
            prompt = _text_of(item.get("content"))
            if prompt:
                break
        # A user message ends the run of trailing tool outputs; assistant items (the call
        # itself, reasoning) sit between the outputs and do not.
        if kind == "message" and item.get("role") in ("user", "assistant"):
            trailing = False
    tools = _function_tools(body.get("tools"))
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    schema = _schema_of(fmt, fmt)
    model = str(body.get("model") or "gpt")
    return Conversation(prompt, tuple(reversed(results)), tools, model, schema)


def _schema_of(fmt: Any, holder: Any) -> dict[str, Any] | None:
    """The schema of a ``json_schema`` response format (``holder`` carries ``schema``)."""
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    schema = holder.get("schema") if isinstance(holder, dict) else None
    return schema if isinstance(schema, dict) else {}


def _response_items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.thinking is not None:
        items.append(
            {
                "id": f"rs_{uuid.uuid4().hex[:24]}",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.thinking}],
            }
        )
    if reply.text or reply.tool_call is None:
        items.append(
            {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    if reply.tool_call is not None and reply.tool_call.input is not None:
        items.append(
            {
                "id": f"ctc_{uuid.uuid4().hex[:24]}",
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": f"call_{uuid.uuid4().hex[:24]}",
                "name": reply.tool_call.name,
                "input": reply.tool_call.input,
            }
        )
    elif reply.tool_call is not None:
        items.append(
            {
                "id": f"fc_{uuid.uuid4().hex[:24]}",
                "type": "function_call",
                "status": "completed",
                "call_id": f"call_{uuid.uuid4().hex[:24]}",
                "name": reply.tool_call.name,
                "arguments": json.dumps(reply.tool_call.arguments),
            }
        )
    return items


def response_object(
    reply: Reply, model: str, input_tokens: int, items: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The completed ``response`` object (the non-streaming answer)."""
    output = _response_items(reply) if items is None else items
    out_tokens = max(1, len(json.dumps(output)) // 4)
    cached = 0
    if reply.usage is not None:
        # OpenAI counts cached tokens inside the input tokens and has no cache-write count.
        input_tokens, out_tokens, cached, _ = reply.usage
    return {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": out_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + out_tokens,
        },
    }


def responses_events(reply: Reply, model: str, input_tokens: int) -> Iterator[tuple[bytes, bool]]:
    """Responses SSE events; the flag marks text deltas (where a slow stream pauses)."""
    items = _response_items(reply)
    final = response_object(reply, model, input_tokens, items)
    seq = iter(range(1_000_000))

    def event(data: dict[str, Any]) -> bytes:
        return _sse({**data, "sequence_number": next(seq)})

    created = {**final, "status": "in_progress", "output": [], "usage": None}
    yield event({"type": "response.created", "response": created}), False
    yield event({"type": "response.in_progress", "response": created}), False
    for index, item in enumerate(items):
        kind = item["type"]
        if kind == "reasoning":
            head = {**item, "summary": []}
        elif kind == "message":
            head = {**item, "status": "in_progress", "content": []}
        elif kind == "custom_tool_call":
            head = {**item, "status": "in_progress", "input": ""}
        else:
            head = {**item, "status": "in_progress", "arguments": ""}
        yield (
            event({"type": "response.output_item.added", "output_index": index, "item": head}),
            False,
        )
        where = {"item_id": item["id"], "output_index": index}
        if kind == "reasoning":
            text = item["summary"][0]["text"]
            part: dict[str, Any] = {"type": "summary_text", "text": ""}
            yield (
                event(
                    {
                        "type": "response.reasoning_summary_part.added",
                        **where,
                        "summary_index": 0,
                        "part": part,
                    }
                ),
                False,
            )
            yield (
                event(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        **where,
                        "summary_index": 0,
                        "delta": text,
                    }
                ),
                False,
            )
            yield (
                event(
                    {
                        "type": "response.reasoning_summary_text.done",
                        **where,
                        "summary_index": 0,
                        "text": text,
                    }
                ),
                False,
            )
            yield (
                event(
                    {
                        "type": "response.reasoning_summary_part.done",
                        **where,
                        "summary_index": 0,
                        "part": {**part, "text": text},
                    }
                ),
                False,
            )
        elif kind == "message":
            part = {"type": "output_text", "text": "", "annotations": []}
            at = {**where, "content_index": 0}
            yield event({"type": "response.content_part.added", **at, "part": part}), False
            for chunk in reply.text_chunks:
                if chunk:
                    yield event({"type": "response.output_text.delta", **at, "delta": chunk}), True
            yield event({"type": "response.output_text.done", **at, "text": reply.text}), False
            yield (
                event(
                    {
                        "type": "response.content_part.done",
                        **at,
                        "part": {**part, "text": reply.text},
                    }
                ),
                False,
            )
        elif kind == "custom_tool_call":
            text = item["input"]
            yield (
                event({"type": "response.custom_tool_call_input.delta", **where, "delta": text}),
                False,
            )
            yield (
                event({"type": "response.custom_tool_call_input.done", **where, "input": text}),
                False,
            )
        else:
            args = item["arguments"]
            yield (
                event({"type": "response.function_call_arguments.delta", **where, "delta": args}),
                False,
            )
            yield (
                event(
                    {"type": "response.function_call_arguments.done", **where, "arguments": args}
                ),
                False,
            )
        yield (
            event({"type": "response.output_item.done", "output_index": index, "item": item}),
            False,
        )
    yield event({"type": "response.completed", "response": final}), False


# --- Chat Completions ----------------------------------------------------------------------


def chat_conversation(body: dict[str, Any]) -> Conversation:
    """Reduce a Chat Completions request to the scripting view."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    results: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.append(_text_of(message.get("content")))
    prompt = next(
        (
            _text_of(m.get("content"))
            for m in reversed(messages)
            if m.get("role") == "user" and _text_of(m.get("content"))
        ),
        "",
    )
    tools = _function_tools(body.get("tools"))
    fmt = body.get("response_format")
    schema = _schema_of(fmt, fmt.get("json_schema") if isinstance(fmt, dict) else None)
    model = str(body.get("model") or "gpt")
    return Conversation(prompt, tuple(reversed(results)), tools, model, schema)


def _chat_tool_call(reply: Reply) -> dict[str, Any] | None:
    if reply.tool_call is None:
        return None
    return {
        "id": f"call_{uuid.uuid4().hex[:24]}",
        "type": "function",
        "function": {
            "name": reply.tool_call.name,
            "arguments": json.dumps(reply.tool_call.arguments),
        },
    }


def _chat_usage(reply: Reply, input_tokens: int) -> dict[str, int]:
    out_tokens = max(1, (len(reply.text) + len(reply.thinking or "")) // 4)
    if reply.usage is not None:
        input_tokens, out_tokens = reply.usage[0], reply.usage[1]
    return {
        "prompt_tokens": input_tokens,
        "completion_tokens": out_tokens,
        "total_tokens": input_tokens + out_tokens,
    }


def chat_completion(reply: Reply, model: str, input_tokens: int) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object."""
    call = _chat_tool_call(reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.thinking is not None:
        message["reasoning_content"] = reply.thinking
    if call is not None:
        message["tool_calls"] = [call]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if call else "stop",
            }
        ],
        "usage": _chat_usage(reply, input_tokens),
    }


def chat_events(
    reply: Reply, model: str, input_tokens: int, include_usage: bool
) -> Iterator[tuple[bytes, bool]]:
    """Chat Completions SSE chunks ending in ``[DONE]``; the flag marks text deltas."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(data)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""}), False
    if reply.thinking is not None:
        yield chunk({"reasoning_content": reply.thinking}), False
    for piece in reply.text_chunks:
        if piece:
            yield chunk({"content": piece}), True
    call = _chat_tool_call(reply)
    if call is not None:
        head = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        yield chunk({"tool_calls": [{"index": 0, **head}]}), False
        args = {"index": 0, "function": {"arguments": call["function"]["arguments"]}}
        yield chunk({"tool_calls": [args]}), False
    yield chunk({}, "tool_calls" if call else "stop"), False
    if include_usage:
        data = {**base, "choices": [], "usage": _chat_usage(reply, input_tokens)}
        yield f"data: {json.dumps(data)}\n\n".encode(), False
    yield b"data: [DONE]\n\n", False
