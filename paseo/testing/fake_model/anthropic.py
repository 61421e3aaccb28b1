"""The Anthropic Messages API: reading requests and writing answers (SSE and whole JSON)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from .script import Conversation, Reply, ToolSpec

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}

# Claude Code wraps context it injects into the user turn in these tags; they are not the prompt.
_INJECTED_PREFIXES = ("<system-reminder>", "<command-name>", "<local-command-stdout>")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def tool_result_text(content: Any) -> str:
    """The text of a ``tool_result`` block's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    return "\n".join(
        str(block.get("text", "")) for block in _blocks(content) if block.get("type") == "text"
    )


def _prompt_text(blocks: list[dict[str, Any]]) -> str:
    # The newest text block is the prompt: Claude Code merges a failed or interrupted turn's
    # user message with the next one into a single message of several text blocks.
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    real = [t for t in texts if t.strip() and not t.lstrip().startswith(_INJECTED_PREFIXES)]
    return (real or texts or [""])[-1].strip()


def conversation(body: dict[str, Any]) -> Conversation:
    """Reduce a Messages request to the scripting view."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    user_turns = [m for m in messages if m.get("role") == "user"]
    results: tuple[str, ...] = ()
    if user_turns:
        newest = _blocks(user_turns[-1].get("content"))
        results = tuple(
            tool_result_text(b.get("content")) for b in newest if b.get("type") == "tool_result"
        )
    prompt = ""
    for message in reversed(user_turns):
        blocks = _blocks(message.get("content"))
        if any(b.get("type") == "tool_result" for b in blocks):
            continue
        prompt = _prompt_text(blocks)
        if prompt:
            break
    tools = tuple(
        ToolSpec(str(t["name"]), t.get("input_schema") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict) and "name" in t
    )
    return Conversation(
        prompt, results, tools, str(body.get("model") or "claude-fake"), _output_schema(body)
    )


def _output_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    # Structured output: ``output_config.format`` (current) or ``output_format`` (older beta).
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else body.get("output_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        return schema if isinstance(schema, dict) else {}
    return None


def estimate_tokens(raw: bytes) -> int:
    """A stable, plausible token count for usage fields (about four bytes per token)."""
    return max(1, len(raw) // 4)


def _content(reply: Reply) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if reply.thinking is not None:
        content.append({"type": "thinking", "thinking": reply.thinking, "signature": "fake-sig"})
    if reply.text_chunks and reply.text:
        content.append({"type": "text", "text": reply.text})
    if reply.tool_call is not None:
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": reply.tool_call.name,
                "input": reply.tool_call.arguments,
            }
        )
    if not content:
        content.append({"type": "text", "text": ""})
    return content


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_call is not None else "end_turn"


def output_tokens(reply: Reply) -> int:
    """Usage output tokens for a reply (counted from its rendered size)."""
    return max(1, len(json.dumps(_content(reply))) // 4)


def _usage(reply: Reply, input_tokens: int) -> dict[str, int]:
    if reply.usage is not None:
        given_in, given_out, cache_read, cache_write = reply.usage
        return {
            "input_tokens": given_in,
            "output_tokens": given_out,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        }
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens(reply),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def message(reply: Reply, model: str, input_tokens: int) -> dict[str, Any]:
    """The non-streaming ``message`` object."""
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(reply),
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": _usage(reply, input_tokens),
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    """The Anthropic error JSON for ``status``."""
    kind = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def stream_events(reply: Reply, model: str, input_tokens: int) -> Iterator[tuple[bytes, bool]]:
    """SSE events for ``reply``; the flag marks text deltas (where a slow stream pauses)."""
    whole = message(reply, model, input_tokens)
    start = {**whole, "content": [], "stop_reason": None}
    start["usage"] = {**whole["usage"], "output_tokens": 1}
    yield _event("message_start", {"type": "message_start", "message": start}), False
    for index, block in enumerate(whole["content"]):
        kind = block["type"]
        head: dict[str, Any]
        if kind == "thinking":
            head = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        elif kind == "text":
            head = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in reply.text_chunks if c] or [
                {"type": "text_delta", "text": ""}
            ]
        else:
            head = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        yield (
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": head},
            ),
            False,
        )
        for delta in deltas:
            yield (
                _event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                ),
                delta["type"] == "text_delta",
            )
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index}), False
    yield (
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": whole["usage"]["output_tokens"]},
            },
        ),
        False,
    )
    yield _event("message_stop", {"type": "message_stop"}), False
