"""Pure translations from ACP shapes to the Paseo event vocabulary.

ACP tool calls carry a ``kind`` (read, edit, delete, move, search, execute, think, fetch,
switch_mode, other), a human ``title``, the raw tool input/output and a list of content blocks
(text, diffs, terminal references). Paseo's tool details are typed by what the call does, so the
kind picks the detail type and the raw input (whatever key names the agent's tools use) fills it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.events import (
    AgentEvent,
    AnyToolDetail,
    EditDetail,
    FetchDetail,
    OtherDetail,
    PlanDetail,
    ReadDetail,
    SearchDetail,
    ShellDetail,
    SubAgentDetail,
    TodoEntry,
    TodoItem,
    ToolStatus,
    TurnCanceled,
    TurnCompleted,
    TurnFailed,
    Usage,
    WriteDetail,
)
from paseo_hookspecs.interfaces.agent import PromptImage, SessionConfig, SlashCommand

log = logging.getLogger("paseo_acp.mapping")

PROTOCOL_VERSION = 1
"""The ACP protocol version this client speaks."""
AUTH_REQUIRED = -32000
"""The JSON-RPC error code of an agent that must be signed in first."""


def initialize_params(version: str) -> dict[str, Any]:
    """ACP ``initialize``: Paseo, running as ``version``, offers no file system or terminal of
    its own (the agent uses its own tools)."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
        },
        "clientInfo": {"name": "paseo", "title": "Paseo", "version": version},
    }


OUTPUT_LIMIT = 20_000
"""Characters of tool output kept in a detail (the full output stays with the agent)."""

_PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "abs_path", "file")
_QUERY_KEYS = ("pattern", "query", "regex", "search", "glob")
_COMMAND_KEYS = ("command", "cmd", "commandLine", "script")


def tool_status(acp_status: Any) -> ToolStatus:
    """ACP ``pending``/``in_progress`` are both still running for Paseo."""
    if acp_status == "completed":
        return "completed"
    if acp_status == "failed":
        return "failed"
    return "running"


def content_text(block: Any) -> str | None:
    """The text of one ACP content block (``text`` or an embedded text resource)."""
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, Mapping) and isinstance(resource.get("text"), str):
            return str(resource["text"])
    if kind == "resource_link" and isinstance(block.get("uri"), str):
        return str(block["uri"])
    return None


def _tool_content_text(content: Iterable[Any]) -> str | None:
    texts = [
        text
        for item in content
        if isinstance(item, Mapping) and item.get("type") == "content"
        for text in [content_text(item.get("content"))]
        if text
    ]
    return "\n".join(texts) if texts else None


def _first_diff(content: Iterable[Any]) -> Mapping[str, Any] | None:
    for item in content:
        if isinstance(item, Mapping) and item.get("type") == "diff":
            return item
    return None


def _string(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return " ".join(value)
    return None


def _pick(raw: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        text = _string(raw.get(key))
        if text:
            return text
    return None


def _output_text(raw_output: Any, content: list[Any]) -> str | None:
    text: str | None
    if raw_output is None:
        text = _tool_content_text(content)
    elif isinstance(raw_output, str):
        text = raw_output
    elif isinstance(raw_output, Mapping):
        text = _pick(raw_output, ("output", "stdout", "formatted_output", "result", "content"))
        if text is None:
            text = json.dumps(raw_output, ensure_ascii=False)
    else:
        text = json.dumps(raw_output, ensure_ascii=False)
    return text[:OUTPUT_LIMIT] if text is not None else None


def _exit_code(raw_output: Any) -> int | None:
    if isinstance(raw_output, Mapping):
        for key in ("exitCode", "exit_code", "returncode"):
            value = raw_output.get(key)
            if isinstance(value, int):
                return value
    return None


def tool_output(call: Mapping[str, Any]) -> str | None:
    """The output text of an ACP tool call so far (raw output, else its text content)."""
    content = call.get("content")
    return _output_text(call.get("rawOutput"), content if isinstance(content, list) else [])


def tool_detail(call: Mapping[str, Any]) -> AnyToolDetail:
    """The typed detail of an ACP tool call (its accumulated ``tool_call`` fields)."""
    kind = call.get("kind")
    raw_input = call.get("rawInput")
    raw = raw_input if isinstance(raw_input, Mapping) else {}
    title = call.get("title") if isinstance(call.get("title"), str) else ""
    content_value = call.get("content")
    content: list[Any] = content_value if isinstance(content_value, list) else []
    locations = call.get("locations")
    location = None
    if isinstance(locations, list) and locations and isinstance(locations[0], Mapping):
        location = _string(locations[0].get("path"))
    path = _pick(raw, _PATH_KEYS) or location
    output = _output_text(call.get("rawOutput"), content)

    if kind == "execute":
        return ShellDetail(
            command=_pick(raw, _COMMAND_KEYS) or title,
            cwd=_string(raw.get("cwd")) or _string(raw.get("workdir")),
            output=output,
            exitCode=_exit_code(call.get("rawOutput")),
        )
    if kind == "read":
        return ReadDetail(path=path or title, content=output)
    if kind == "edit":
        diff = _first_diff(content)
        if diff is not None:
            diff_path = _string(diff.get("path")) or path or title
            if diff.get("oldText") is None:
                return WriteDetail(path=diff_path, content=_string(diff.get("newText")))
            return EditDetail(
                path=diff_path,
                oldText=_string(diff.get("oldText")),
                newText=_string(diff.get("newText")),
            )
        written = _string(raw.get("content"))
        if written is not None:
            return WriteDetail(path=path or title, content=written)
        return EditDetail(
            path=path or title,
            oldText=_string(raw.get("old_string")),
            newText=_string(raw.get("new_string")),
        )
    if kind == "search":
        return SearchDetail(
            query=_pick(raw, _QUERY_KEYS) or title,
            path=_string(raw.get("path")),
            results=output,
        )
    if kind == "fetch":
        return FetchDetail(url=_pick(raw, ("url", "uri")) or _pick(raw, _QUERY_KEYS) or title)
    if kind == "think" and ("subagent_type" in raw or "prompt" in raw):
        return SubAgentDetail(
            description=_pick(raw, ("description", "prompt")) or title,
            agentType=_string(raw.get("subagent_type")),
            result=output,
        )
    if kind == "switch_mode" and _string(raw.get("plan")):
        return PlanDetail(text=str(raw["plan"]))
    return OtherDetail(input=raw_input, output=call.get("rawOutput"))


def tool_name(call: Mapping[str, Any]) -> str:
    """A stable tool name: the agent's own when it says (``name``, Claude's ``_meta``), else
    the ACP kind."""
    name = call.get("name")
    if isinstance(name, str) and name:
        return name
    meta = call.get("_meta")
    if isinstance(meta, Mapping):
        for value in meta.values():
            if isinstance(value, Mapping) and isinstance(value.get("toolName"), str):
                return str(value["toolName"])
    kind = call.get("kind")
    return kind if isinstance(kind, str) and kind else "tool"


def todo_item(entries: Any) -> TodoItem:
    """An ACP ``plan`` update (the whole plan, every time) as a todo list."""
    items: list[TodoEntry] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping):
            continue
        status = entry.get("status")
        items.append(
            TodoEntry(
                text=str(entry.get("content") or ""),
                status=status if status in ("pending", "in_progress", "completed") else "pending",
            )
        )
    return TodoItem(items=items)


def usage(result_usage: Any, last_update: Mapping[str, Any] | None) -> Usage | None:
    """Usage of a finished turn from the prompt result's ``usage`` and the last
    ``usage_update`` (context window size and cost)."""
    fields: dict[str, Any] = {}
    if isinstance(result_usage, Mapping):
        for source, target in (
            ("inputTokens", "inputTokens"),
            ("outputTokens", "outputTokens"),
            ("cachedReadTokens", "cachedInputTokens"),
            ("cachedWriteTokens", "cacheWriteTokens"),
        ):
            if isinstance(result_usage.get(source), int):
                fields[target] = result_usage[source]
    if last_update is not None:
        if isinstance(last_update.get("size"), int):
            fields["contextWindow"] = last_update["size"]
        cost = last_update.get("cost")
        if (
            isinstance(cost, Mapping)
            and cost.get("currency", "USD") == "USD"
            and isinstance(cost.get("amount"), int | float)
        ):
            fields["costUsd"] = float(cost["amount"])
    return Usage(**fields) if fields else None


def mcp_servers(servers: Mapping[str, Any], capabilities: Mapping[str, Any]) -> list[Any]:
    """Paseo's ``{name: config}`` MCP servers as ACP's list, keeping only transports the agent
    supports (stdio always; ``http``/``sse`` when ``mcpCapabilities`` says so)."""
    result: list[Any] = []
    for name, config in servers.items():
        if not isinstance(config, Mapping):
            continue
        kind = config.get("type", "stdio" if "command" in config else "http")
        if kind in ("http", "sse"):
            if not capabilities.get(kind) or not isinstance(config.get("url"), str):
                continue
            headers = config.get("headers") or {}
            result.append(
                {
                    "type": kind,
                    "name": name,
                    "url": config["url"],
                    "headers": [{"name": k, "value": str(v)} for k, v in dict(headers).items()],
                }
            )
        elif isinstance(config.get("command"), str):
            env = config.get("env") or {}
            result.append(
                {
                    "name": name,
                    "command": config["command"],
                    "args": [str(arg) for arg in config.get("args") or []],
                    "env": [{"name": k, "value": str(v)} for k, v in dict(env).items()],
                }
            )
    return result


def session_params(
    config: SessionConfig, capabilities: Mapping[str, Any], provider_id: str
) -> dict[str, Any]:
    """The ``session/new`` / ``session/load`` parameters for ``config``, as far as the agent's
    advertised ``capabilities`` can take them."""
    mcp_capabilities = capabilities.get("mcpCapabilities")
    params: dict[str, Any] = {
        "cwd": config.cwd,
        "mcpServers": mcp_servers(
            config.mcpServers,
            mcp_capabilities if isinstance(mcp_capabilities, dict) else {},
        ),
    }
    system_prompt = config.systemPrompt
    session_capabilities = capabilities.get("sessionCapabilities")
    advertised = (
        session_capabilities.get("systemPrompt") if isinstance(session_capabilities, dict) else None
    )
    modes = advertised.get("mode") if isinstance(advertised, dict) else None
    if not system_prompt:
        return params
    if isinstance(modes, dict) and "append" in modes:
        # Paseo's system prompt adds to the agent's own instructions; only an agent that can
        # append takes it as meant ("override" would drop the agent's instructions).
        params["systemPrompt"] = {
            "mode": "append",
            "content": [{"type": "text", "text": system_prompt}],
        }
    else:
        # The Claude Code adapters' extension (`_meta.systemPrompt.append`), which they honour
        # while advertising only "override"; an agent that does not know it ignores `_meta`.
        params["_meta"] = {"systemPrompt": {"append": system_prompt}}
        log.info(
            "ACP agent %s advertises no appendable system prompt; sent as "
            "_meta.systemPrompt.append",
            provider_id,
        )
    return params


def prompt_end(provider_id: str, result: Any, last_usage: dict[str, Any] | None) -> AgentEvent:
    """The event that ends a turn, from the ``session/prompt`` result (its ``stopReason``)."""
    result = result if isinstance(result, dict) else {}
    stop = result.get("stopReason")
    if stop == "cancelled":
        return TurnCanceled(provider=provider_id)
    if stop == "refusal":
        return TurnFailed(
            provider=provider_id,
            error="the agent refused to continue (stopReason: refusal)",
            code="refusal",
        )
    return TurnCompleted(
        provider=provider_id, usage=usage(result.get("usage"), last_usage), stopReason=stop
    )


def prompt_blocks(
    text: str, images: list[PromptImage], capabilities: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The ``session/prompt`` content for ``text`` and ``images``; ``InvalidParams`` for images
    when the agent did not advertise ``promptCapabilities.image``."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if not images:
        return blocks
    prompt_caps = capabilities.get("promptCapabilities")
    if not (isinstance(prompt_caps, Mapping) and prompt_caps.get("image") is True):
        raise InvalidParams(
            "this ACP agent does not take images (it advertises no promptCapabilities.image); "
            "send the prompt without --image"
        )
    return blocks + [
        {"type": "image", "mimeType": image.mediaType, "data": image.data} for image in images
    ]


def slash_commands(listed: Any) -> list[SlashCommand]:
    """An ACP ``available_commands_update``'s ``availableCommands`` (``name``, ``description``,
    ``input.hint``) as slash commands; malformed entries are skipped."""
    commands: list[SlashCommand] = []
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, Mapping):
            given = entry.get("input")
            hint = given.get("hint") if isinstance(given, Mapping) else None
            command = SlashCommand.listed(entry.get("name"), entry.get("description"), hint)
            if command is not None:
                commands.append(command)
    return commands
