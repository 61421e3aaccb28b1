"""Daemon settings, project settings, provider diagnostics and restart.

Each goes through the session's own methods, so what a client may read or change is exactly
what ``/ws`` lets a session of its kind do:

- ``get/set_daemon_config_request`` → ``config.get`` / ``config.patch``. The TypeScript daemon's
  mutable settings are ``mcp.injectIntoAgents`` and ``providers.<id>`` (``enabled``,
  ``additionalModels``, …); here they are ``plugins.mcp.settings.injectIntoAgents`` and
  ``agents.providers.<id>``. ``config.patch`` validates the result as start-up does (an invalid
  patch writes nothing and answers the validation error) and refuses a remote session the
  local-only settings (``injectIntoAgents`` among them, naming the path); ``config.get`` hides
  every secret (a provider's ``env`` key shows the redaction placeholder: it is set, its value
  is not sent). Keys of neither section are refused by name rather than dropped.
- ``read/write_project_config_request`` → ``project.config.read/write`` of the project whose
  root is ``repoRoot`` (a root no project has is ``project_not_found``, as in the TypeScript
  daemon); the kernel validates ``paseo.json`` with the parser every reader uses and writes it
  atomically, refusing a write over a revision other than the one the client read.
- ``provider_diagnostic_request`` → ``provider.diagnostic`` (the doctor's checks, asked of the
  daemon), printed as the TypeScript daemon prints a provider's diagnostic.
- ``restart_server_request`` → ``server.restart``, local sessions only: a remote one gets the
  session's refusal as ``rpc_error``, and nothing restarts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import settings as st
from paseo_tswire.models.messages import RpcError

MUTABLE = frozenset({"mcp", "providers"})
"""The sections of the TypeScript daemon's mutable config."""


def _mcp_inject(config: dict[str, Any]) -> bool:
    plugins = config.get("plugins") or {}
    settings = ((plugins.get("mcp") or {}).get("settings")) or {}
    if "injectIntoAgents" in settings:
        return bool(settings["injectIntoAgents"])
    legacy = ((config.get("daemon") or {}).get("mcp")) or {}
    return bool(legacy.get("injectIntoAgents", True))


def daemon_view(got: dict[str, Any]) -> st.DaemonConfigView:
    """``config.get``'s (redacted) file contents as ``MutableDaemonConfigSchema``."""
    config = got.get("config") or {}
    providers = ((config.get("agents") or {}).get("providers")) or {}
    return st.DaemonConfigView(
        mcp=st.McpView(injectIntoAgents=_mcp_inject(config)),
        providers={str(k): dict(v) for k, v in providers.items() if isinstance(v, dict)},
    )


def to_patch(patch: st.DaemonConfigPatch) -> dict[str, Any]:
    """The TypeScript patch as a ``config.patch`` of this daemon's ``config.json``; a key of
    another section raises :class:`ValueError` naming it."""
    unknown = sorted(set(patch.model_extra or {}) - MUTABLE)
    if unknown:
        raise ValueError(
            f"not a setting the app changes here: {', '.join(unknown)} (only mcp and "
            "providers; use `paseo config set` for the others)"
        )
    result: dict[str, Any] = {}
    if patch.mcp is not None and patch.mcp.injectIntoAgents is not None:
        result["plugins"] = {"mcp": {"settings": {"injectIntoAgents": patch.mcp.injectIntoAgents}}}
    if patch.providers:
        result["agents"] = {
            "providers": {
                pid: entry.model_dump(exclude_none=True) for pid, entry in patch.providers.items()
            }
        }
    return result


async def get_daemon_config(session: ClientSession, msg: st.GetDaemonConfig) -> None:
    got = await session.call("config.get", {})
    await session.push(
        "get_daemon_config_response",
        st.DaemonConfigReply(requestId=msg.requestId, config=daemon_view(got)),
    )


async def set_daemon_config(session: ClientSession, msg: st.SetDaemonConfig) -> None:
    try:
        patch = to_patch(msg.config)
    except ValueError as exc:
        await _refuse(session, msg.requestId, "set_daemon_config_request", str(exc))
        return
    if patch:
        await session.call("config.patch", {"patch": patch})
    got = await session.call("config.get", {})
    await session.push(
        "set_daemon_config_response",
        st.DaemonConfigReply(requestId=msg.requestId, config=daemon_view(got)),
    )


async def _refuse(session: ClientSession, request_id: str, type_: str, error: str) -> None:
    await session.push(
        "rpc_error",
        RpcError(requestId=request_id, requestType=type_, error=error, code="handler_error"),
    )


# ------------------------------------------------------------------------- project config


def _matching(repo_root: str, projects: list[dict[str, Any]]) -> str | None:
    if not os.path.isabs(repo_root):
        return None
    wanted = os.path.realpath(repo_root)
    for project in projects:
        root = str(project.get("rootPath") or "")
        if root and os.path.realpath(root) == wanted:
            return str(project["projectId"])
    return None


async def _project_id(session: ClientSession, repo_root: str) -> str | None:
    """The active project whose root is ``repo_root`` (both canonicalised: the TypeScript
    daemon resolves it among its known projects the same way)."""
    listed = await session.call("project.list", {})
    # realpath touches the disk: off the loop.
    return await asyncio.to_thread(_matching, repo_root, list(listed.get("projects") or []))


def _failed(
    msg: st.ReadProjectConfig | st.WriteProjectConfig, exc: RpcFailure
) -> st.ProjectConfigFailed:
    error: st.ConfigError | st.StaleConfigError
    if exc.code == "conflict":
        current = exc.data.get("currentRevision")
        error = st.StaleConfigError(
            code="stale_project_config",
            currentRevision=st.Revision.model_validate(current) if current else None,
        )
    elif exc.code == "invalid_params":
        error = st.ConfigError(code="invalid_project_config")
    elif exc.code == "not_found":
        error = st.ConfigError(code="project_not_found")
    else:
        error = st.ConfigError(code="write_failed")
    return st.ProjectConfigFailed(requestId=msg.requestId, repoRoot=msg.repoRoot, error=error)


async def read_project_config(session: ClientSession, msg: st.ReadProjectConfig) -> None:
    type_ = "read_project_config_response"
    project_id = await _project_id(session, msg.repoRoot)
    if project_id is None:
        await session.push(
            type_,
            st.ProjectConfigFailed(
                requestId=msg.requestId,
                repoRoot=msg.repoRoot,
                error=st.ConfigError(code="project_not_found"),
            ),
        )
        return
    try:
        got = await session.call("project.config.read", {"projectId": project_id})
    except RpcFailure as exc:
        await session.push(type_, _failed(msg, exc))
        return
    revision = got.get("revision")
    await session.push(
        type_,
        st.ProjectConfigRead(
            requestId=msg.requestId,
            repoRoot=str(got["rootPath"]),
            config=got.get("config"),
            revision=st.Revision.model_validate(revision) if revision else None,
        ),
    )


async def write_project_config(session: ClientSession, msg: st.WriteProjectConfig) -> None:
    type_ = "write_project_config_response"
    project_id = await _project_id(session, msg.repoRoot)
    if project_id is None:
        await session.push(
            type_,
            st.ProjectConfigFailed(
                requestId=msg.requestId,
                repoRoot=msg.repoRoot,
                error=st.ConfigError(code="project_not_found"),
            ),
        )
        return
    params: dict[str, Any] = {
        "projectId": project_id,
        "config": msg.config,
        "expectedRevision": (
            None if msg.expectedRevision is None else msg.expectedRevision.model_dump()
        ),
    }
    try:
        got = await session.call("project.config.write", params)
    except RpcFailure as exc:
        await session.push(type_, _failed(msg, exc))
        return
    await session.push(
        type_,
        st.ProjectConfigWritten(
            requestId=msg.requestId,
            repoRoot=str(got["rootPath"]),
            config=got["config"],
            revision=st.Revision.model_validate(got["revision"]),
        ),
    )


# ------------------------------------------------------------------- diagnostics, restart


def diagnostic_text(found: dict[str, Any]) -> str:
    """The TypeScript daemon's layout (``formatProviderDiagnostic``): the provider's name, then
    ``  Label: value`` lines — binary, version, availability (its reason names a missing
    program, log-in or key), models."""
    lines = [str(found.get("label") or found.get("providerId"))]
    program = found.get("program")
    if program:
        lines.append(f"  Binary: {program.get('path') or 'not found'}")
        lines.append(f"  Version: {program.get('version')}")
    availability = found.get("availability") or {}
    status = str(availability.get("status") or "unavailable")
    lines.append(f"  Enabled: {'yes' if found.get('enabled') else 'no'}")
    reason = availability.get("reason")
    lines.append(f"  Status: {status.capitalize()}" + (f" ({reason})" if reason else ""))
    if found.get("models") is not None:
        lines.append(f"  Models: {found['models']}")
    elif found.get("modelsError"):
        lines.append(f"  Models: Error - {found['modelsError']}")
    else:
        lines.append("  Models: Not checked")
    return "\n".join(lines)


async def provider_diagnostic(session: ClientSession, msg: st.ProviderDiagnosticRequest) -> None:
    try:
        found = await session.call("provider.diagnostic", {"providerId": msg.provider})
    except RpcFailure as exc:
        await session.push(
            "rpc_error",
            RpcError(
                requestId=msg.requestId,
                requestType="provider_diagnostic_request",
                error=f"Failed to get provider diagnostic: {exc.message}",
                code="provider_diagnostic_failed",
            ),
        )
        return
    await session.push(
        "provider_diagnostic_response",
        st.ProviderDiagnostic(
            provider=msg.provider, diagnostic=diagnostic_text(found), requestId=msg.requestId
        ),
    )


async def restart_server(session: ClientSession, msg: st.RestartServer) -> None:
    reason = msg.reason if msg.reason and msg.reason.strip() else None
    # Refused (access_denied, invalid_config) before anything is announced: the dispatcher
    # answers rpc_error and the daemon keeps running.
    await session.call(
        "server.restart", {"reason": reason or "restart_server_request (TypeScript client)"}
    )
    await session.push(
        "status",
        st.RestartRequested(clientId=session.client_id, reason=reason, requestId=msg.requestId),
    )
    await session.flush(2.0)


ROUTES: dict[str, tuple[type[BaseModel], Callable[[ClientSession, Any], Awaitable[None]]]] = {
    "get_daemon_config_request": (st.GetDaemonConfig, get_daemon_config),
    "set_daemon_config_request": (st.SetDaemonConfig, set_daemon_config),
    "read_project_config_request": (st.ReadProjectConfig, read_project_config),
    "write_project_config_request": (st.WriteProjectConfig, write_project_config),
    "provider_diagnostic_request": (st.ProviderDiagnosticRequest, provider_diagnostic),
    "restart_server_request": (st.RestartServer, restart_server),
}
"""Inbound ``type`` → (request model, handler), joined into the dispatcher's table."""
