"""Pure translations of Pi's RPC records into Paseo's event vocabulary."""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.events import (
    AnyToolDetail,
    EditDetail,
    OtherDetail,
    ReadDetail,
    ShellDetail,
    ToolCallItem,
    ToolStatus,
    Usage,
    WriteDetail,
)
from paseo_hookspecs.interfaces.agent import ModelInfo, ThinkingOption

THINKING_LEVELS = ("minimal", "low", "medium", "high", "xhigh")
"""Pi's reasoning levels above ``off`` (``xhigh`` only means something to a few models)."""


def result_text(result: Any) -> str | None:
    """The text blocks of a tool result (``{"content": [{"type": "text", "text": …}]}``)."""
    if not isinstance(result, dict):
        return None
    blocks = result.get("content")
    if not isinstance(blocks, list):
        return None
    texts = [
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def _str(args: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def tool_detail(name: str, args: Any, output: str | None = None) -> AnyToolDetail:
    """A detail for Pi's built-in tools (``bash``, ``read``, ``write``, ``edit``), else other."""
    fields = args if isinstance(args, dict) else {}
    path = _str(fields, "path", "file_path", "filePath")
    if name == "bash" and _str(fields, "command") is not None:
        return ShellDetail(command=_str(fields, "command") or "", output=output)
    if name == "read" and path is not None:
        return ReadDetail(path=path, content=output)
    if name == "write" and path is not None:
        return WriteDetail(path=path, content=_str(fields, "content"))
    if name == "edit" and path is not None:
        return EditDetail(
            path=path, oldText=_str(fields, "oldText", "old_text"), newText=_str(fields, "newText")
        )
    return OtherDetail(input=args, output=output)


def tool_item(
    call_id: str, name: str, args: Any, status: ToolStatus, output: str | None = None
) -> ToolCallItem:
    return ToolCallItem(
        callId=call_id,
        name=name,
        status=status,
        detail=tool_detail(name, args, output),
        error=output if status == "failed" else None,
    )


def usage_of(messages: Any) -> Usage | None:
    """The summed usage of the assistant messages an ``agent_end`` carries."""
    if not isinstance(messages, list):
        return None
    totals = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost: float | None = None
    seen = False
    for message in messages:
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(usage, dict):
            continue
        seen = True
        for key in totals:
            value = usage.get(key)
            totals[key] += value if isinstance(value, int) else 0
        charged = usage.get("cost")
        if isinstance(charged, dict) and isinstance(charged.get("total"), int | float):
            # Unknown stays unknown: a turn none of whose messages was priced has no cost.
            cost = (cost or 0.0) + float(charged["total"])
    if not seen:
        return None
    return Usage(
        inputTokens=totals["input"],
        outputTokens=totals["output"],
        cachedInputTokens=totals["cacheRead"],
        cacheWriteTokens=totals["cacheWrite"],
        costUsd=cost,
    )


def last_assistant(messages: Any) -> dict[str, Any] | None:
    """The last assistant message of an ``agent_end`` (its ``stopReason`` ends the turn)."""
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            return message
    return None


def model_id(model: Any) -> str | None:
    """``provider/id`` of a Pi model object."""
    if isinstance(model, dict) and isinstance(model.get("provider"), str):
        ident = model.get("id")
        if isinstance(ident, str):
            return f"{model['provider']}/{ident}"
    return None


def model_info(model: Any, *, default: bool = False) -> ModelInfo | None:
    """A Pi model object as a :class:`ModelInfo`: reasoning models get the thinking levels."""
    ident = model_id(model)
    if ident is None:
        return None
    name = model.get("name")
    return ModelInfo(
        id=ident,
        label=f"{name} ({model['provider']})" if isinstance(name, str) and name else ident,
        default=default,
        thinkingOptions=[
            ThinkingOption(id=level, label=level.capitalize()) for level in THINKING_LEVELS
        ]
        if model.get("reasoning")
        else [],
    )
