"""Ping, providers (snapshot, models, modes), worktrees and shutdown."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from paseo_hookspecs.agents import AgentQuery

from paseo_tswire import projection
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import inbound as req
from paseo_tswire.models import messages as out
from paseo_tswire.models.agent import SelectOption


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def ping(session: ClientSession, msg: req.Ping) -> None:
    received = int(time.time() * 1000)
    await session.push(
        "pong",
        out.Pong(
            requestId=msg.requestId,
            clientSentAt=msg.clientSentAt,
            serverReceivedAt=received,
            serverSentAt=int(time.time() * 1000),
        ),
    )


def _models(provider: str, views: list[dict[str, Any]]) -> list[out.ModelDefinition]:
    models = []
    for view in views:
        options = [
            SelectOption(id=str(o["id"]), label=str(o.get("label") or o["id"]))
            for o in view.get("thinkingOptions") or []
        ]
        models.append(
            out.ModelDefinition(
                provider=provider,
                id=str(view["id"]),
                label=str(view.get("label") or view["id"]),
                isDefault=bool(view.get("default")),
                thinkingOptions=options or None,
            )
        )
    return models


async def _entries(session: ClientSession, *, refresh: bool) -> list[out.ProviderEntry]:
    listed = await session.call("provider.list", {"refresh": refresh})
    entries = []
    for view in listed.get("providers") or []:
        provider = str(view["id"])
        availability = view.get("availability") or {}
        status = availability.get("status", "unavailable")
        entry = out.ProviderEntry(
            provider=provider,
            status=status,
            enabled=bool(view.get("enabled", True)),
            error=availability.get("reason") if status == "error" else None,
            fetchedAt=availability.get("checkedAt"),
            label=str(view.get("label") or provider),
        )
        if status == "ready" and entry.enabled:
            try:
                found = await session.call("provider.models", {"providerId": provider})
            except RpcFailure as exc:
                entry = entry.model_copy(update={"status": "error", "error": exc.message})
            else:
                entry = entry.model_copy(
                    update={
                        "models": _models(provider, found.get("models") or []),
                        "modes": projection.modes(found.get("modes") or []),
                    }
                )
        entries.append(entry)
    return entries


async def providers_snapshot(session: ClientSession, msg: req.Providers) -> None:
    await session.push(
        "get_providers_snapshot_response",
        out.ProvidersSnapshot(
            entries=await _entries(session, refresh=False),
            generatedAt=_now(),
            requestId=msg.requestId,
        ),
    )


async def refresh_providers(session: ClientSession, msg: req.Providers) -> None:
    await session.push(
        "refresh_providers_snapshot_response",
        out.RefreshProvidersSnapshot(requestId=msg.requestId, acknowledged=True),
    )
    await session.push(
        "providers_snapshot_update",
        out.ProvidersSnapshotUpdate(
            entries=await _entries(session, refresh=True), generatedAt=_now()
        ),
    )


async def provider_models(session: ClientSession, msg: req.ProviderRef) -> None:
    try:
        found = await session.call("provider.models", {"providerId": msg.provider})
    except RpcFailure as exc:
        reply = out.ProviderModels(
            provider=msg.provider, error=exc.message, fetchedAt=_now(), requestId=msg.requestId
        )
    else:
        reply = out.ProviderModels(
            provider=msg.provider,
            models=_models(msg.provider, found.get("models") or []),
            error=None,
            fetchedAt=_now(),
            requestId=msg.requestId,
        )
    await session.push("list_provider_models_response", reply)


async def provider_features(session: ClientSession, msg: req.ListProviderFeatures) -> None:
    """``provider.features`` for the draft: what a new agent with these settings would offer."""
    draft = msg.draftConfig
    params: dict[str, Any] = {"providerId": draft.provider, "cwd": draft.cwd}
    for key in ("modeId", "model", "thinkingOptionId", "featureValues"):
        value = getattr(draft, key)
        if value is not None:
            params[key] = value
    try:
        found = await session.call("provider.features", params)
    except RpcFailure as exc:
        reply = out.ProviderFeatures(
            provider=draft.provider, error=exc.message, fetchedAt=_now(), requestId=msg.requestId
        )
    else:
        reply = out.ProviderFeatures(
            provider=draft.provider,
            features=projection.features(found.get("features") or []),
            error=None,
            fetchedAt=_now(),
            requestId=msg.requestId,
        )
    await session.push("list_provider_features_response", reply)


async def provider_modes(session: ClientSession, msg: req.ProviderRef) -> None:
    try:
        found = await session.call("provider.models", {"providerId": msg.provider})
    except RpcFailure as exc:
        reply = out.ProviderModes(
            provider=msg.provider, error=exc.message, fetchedAt=_now(), requestId=msg.requestId
        )
    else:
        reply = out.ProviderModes(
            provider=msg.provider,
            modes=projection.modes(found.get("modes") or []),
            error=None,
            fetchedAt=_now(),
            requestId=msg.requestId,
        )
    await session.push("list_provider_modes_response", reply)


def _worktree(info: dict[str, Any]) -> out.Worktree:
    return out.Worktree(
        worktreePath=str(info["path"]),
        createdAt=str(info.get("createdAt") or ""),
        branchName=info.get("branch"),
    )


async def _worktrees(session: ClientSession, repo_root: str | None) -> list[dict[str, Any]]:
    found = await session.call("worktree.list", {})
    items = [w for w in found.get("worktrees") or [] if not w.get("archived")]
    if repo_root is None:
        return items
    projects = await session.call("project.list", {"includeArchived": True})
    wanted = {
        p["projectId"] for p in projects.get("projects") or [] if p.get("rootPath") == repo_root
    }
    return [w for w in items if w.get("projectId") in wanted]


async def worktree_list(session: ClientSession, msg: req.WorktreeList) -> None:
    try:
        items = await _worktrees(session, msg.repoRoot or msg.cwd)
    except RpcFailure as exc:
        await session.push(
            "paseo_worktree_list_response",
            out.WorktreeList(
                worktrees=[],
                error=out.CheckoutError(code="UNKNOWN", message=exc.message),
                requestId=msg.requestId,
            ),
        )
        return
    await session.push(
        "paseo_worktree_list_response",
        out.WorktreeList(
            worktrees=[_worktree(w) for w in items], error=None, requestId=msg.requestId
        ),
    )


async def worktree_archive(session: ClientSession, msg: req.WorktreeArchive) -> None:
    items = await _worktrees(session, msg.repoRoot)
    match = [
        w
        for w in items
        if (msg.worktreePath is not None and w.get("path") == msg.worktreePath)
        or (
            msg.worktreePath is None
            and msg.branchName is not None
            and w.get("branch") == msg.branchName
        )
    ]
    if not match:
        await session.push(
            "paseo_worktree_archive_response",
            out.WorktreeArchive(
                success=False,
                error=out.CheckoutError(code="UNKNOWN", message="no such Paseo worktree"),
                requestId=msg.requestId,
            ),
        )
        return
    target = match[0]
    agents = await session.agents.list(AgentQuery(workspace_id=str(target["workspaceId"])))
    try:
        await session.call("worktree.archive", {"workspaceId": target["workspaceId"]})
    except RpcFailure as exc:
        await session.push(
            "paseo_worktree_archive_response",
            out.WorktreeArchive(
                success=False,
                error=out.CheckoutError(code="UNKNOWN", message=exc.message),
                requestId=msg.requestId,
            ),
        )
        return
    await session.push(
        "paseo_worktree_archive_response",
        out.WorktreeArchive(
            success=True,
            removedAgents=[record.id for record in agents.items],
            error=None,
            requestId=msg.requestId,
        ),
    )


async def shutdown(session: ClientSession, msg: req.Request) -> None:
    # Answered before the daemon stops (server.shutdown answers first, then stops).
    await session.push(
        "status", out.ShutdownRequested(clientId=session.client_id, requestId=msg.requestId)
    )
    await session.flush(2.0)
    await session.call("server.shutdown", {"reason": "shutdown_server_request (TypeScript client)"})


async def available_providers(session: ClientSession, msg: req.Request) -> None:
    listed = await session.call("provider.list", {})
    providers = []
    for view in listed.get("providers") or []:
        availability = view.get("availability") or {}
        ready = availability.get("status") == "ready" and bool(view.get("enabled", True))
        providers.append(
            out.ProviderAvailability(
                provider=str(view["id"]),
                available=ready,
                error=None if ready else availability.get("reason"),
            )
        )
    await session.push(
        "list_available_providers_response",
        out.AvailableProviders(
            providers=providers, error=None, fetchedAt=_now(), requestId=msg.requestId
        ),
    )


async def heartbeat(session: ClientSession, msg: req.Heartbeat) -> None:
    """Where attention notices go (the ``push`` plugin's ``client.heartbeat``); no reply."""
    params: dict[str, Any] = {"deviceType": msg.deviceType, "visible": msg.appVisible}
    if msg.focusedAgentId is not None:
        params["focusedAgentId"] = msg.focusedAgentId
    if msg.lastActivityAt is not None:
        params["lastActivityAt"] = msg.lastActivityAt
    await session.call("client.heartbeat", params)


async def register_push_token(session: ClientSession, msg: req.PushToken) -> None:
    """``push.register`` (the ``push`` plugin); no reply."""
    await session.call("push.register", {"token": msg.token})
