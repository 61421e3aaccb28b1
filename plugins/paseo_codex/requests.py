"""Codex's server requests: the permission prompts they become and the answers Codex expects,
and Paseo's MCP servers in Codex's config shape. Pure translation; the session owns the state.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.events import (
    AllowResolution,
    DenyResolution,
    PermissionRequest,
    PermissionResolution,
    ShellDetail,
)

from .mapping import ItemMapper, describe_change, unwrap_shell

log = logging.getLogger("paseo_codex.requests")

APPROVALS = frozenset({"item/commandExecution/requestApproval", "item/fileChange/requestApproval"})
QUESTIONS = frozenset({"item/tool/requestUserInput", "mcpServer/elicitation/request"})
PERMISSIONS = "item/permissions/requestApproval"


@dataclass
class PendingRequest:
    rpc_id: Any
    method: str
    params: dict[str, Any]
    request: PermissionRequest


MCP_STARTUP_TIMEOUT_SEC = 60
"""``startup_timeout_sec`` of each MCP server given to Codex (its default, 10 s, is shorter than a
loaded machine may take to answer a server's first request; past it the session has none of
that server's tools)."""


def codex_mcp_servers(servers: dict[str, Any]) -> dict[str, Any]:
    """Paseo's ``mcpServers`` (stdio ``command``/``args``/``env`` or remote ``url``/``headers``)
    as Codex's ``mcp_servers`` config table."""
    table: dict[str, Any] = {}
    for name, spec in servers.items():
        if not isinstance(spec, dict):
            continue
        entry: dict[str, Any] = {}
        if isinstance(spec.get("url"), str):
            entry["url"] = spec["url"]
            if isinstance(spec.get("headers"), dict) and spec["headers"]:
                entry["http_headers"] = spec["headers"]
        elif isinstance(spec.get("command"), str):
            entry["command"] = spec["command"]
            for key in ("args", "env", "cwd"):
                if spec.get(key):
                    entry[key] = spec[key]
        else:
            log.warning("MCP server %r has neither a command nor a url; skipped", name)
            continue
        entry["startup_timeout_sec"] = MCP_STARTUP_TIMEOUT_SEC
        table[name] = entry
    return table


def answer(
    pending: PendingRequest, resolution: PermissionResolution
) -> tuple[dict[str, Any], bool]:
    """Codex's answer to a server request, and whether the turn must also be interrupted."""
    allow = isinstance(resolution, AllowResolution)
    interrupt = isinstance(resolution, DenyResolution) and resolution.interrupt
    method, params = pending.method, pending.params
    if method in APPROVALS:
        return {"decision": "accept" if allow else ("cancel" if interrupt else "decline")}, False
    if method == "mcpServer/elicitation/request":
        if allow:
            content = resolution.updatedInput if isinstance(resolution, AllowResolution) else None
            return {"action": "accept", "content": content}, False
        return {"action": "cancel" if interrupt else "decline", "content": None}, False
    if method == "item/tool/requestUserInput":
        answers: dict[str, Any] = {}
        if isinstance(resolution, AllowResolution) and resolution.updatedInput:
            given = resolution.updatedInput.get("answers", resolution.updatedInput)
            for question_id, value in (given if isinstance(given, dict) else {}).items():
                if isinstance(value, dict) and "answers" in value:
                    answers[question_id] = value
                elif isinstance(value, list):
                    answers[question_id] = {"answers": [str(v) for v in value]}
                else:
                    answers[question_id] = {"answers": [str(value)]}
        return {"answers": answers}, interrupt
    # item/permissions/requestApproval: grant exactly what was asked, or nothing.
    granted = params.get("permissions") if allow else {}
    return {"permissions": granted or {}, "scope": "turn"}, interrupt


def permission_request(
    method: str, params: dict[str, Any], mapper: ItemMapper
) -> PermissionRequest:
    request_id = uuid.uuid4().hex
    reason = params.get("reason") if isinstance(params.get("reason"), str) else None
    if method == "item/commandExecution/requestApproval":
        command = unwrap_shell(str(params.get("command") or ""))
        detail = ShellDetail(command=command, cwd=params.get("cwd"))
        return PermissionRequest(
            id=request_id,
            kind="tool",
            title=f"Run {command}" if command else "Run a command",
            description=reason,
            toolName="shell",
            input={"command": command, "cwd": params.get("cwd"), "itemId": params.get("itemId")},
            detail=detail,
        )
    if method == "item/fileChange/requestApproval":
        change = mapper.file_changes.get(str(params.get("itemId")))
        return PermissionRequest(
            id=request_id,
            kind="tool",
            title=describe_change(change) if change is not None else "Apply file changes",
            description=reason,
            toolName="apply_patch",
            input={"itemId": params.get("itemId"), "grantRoot": params.get("grantRoot")},
            detail=change,
        )
    if method == "item/tool/requestUserInput":
        questions = [q for q in params.get("questions") or [] if isinstance(q, dict)]
        title = str(questions[0].get("question")) if questions else "Codex has a question"
        return PermissionRequest(
            id=request_id,
            kind="question",
            title=title,
            toolName="request_user_input",
            input={"questions": questions},
        )
    if method == "mcpServer/elicitation/request":
        return PermissionRequest(
            id=request_id,
            kind="question",
            title=str(params.get("message") or "An MCP server asks for input"),
            toolName=f"mcp:{params.get('serverName', '')}",
            input=params,
        )
    return PermissionRequest(
        id=request_id,
        kind="tool",
        title="Grant Codex additional permissions",
        description=reason,
        toolName="permissions",
        input={"permissions": params.get("permissions"), "cwd": params.get("cwd")},
    )
