"""Agent snapshots and project placements built from this daemon's records and live state.

The clients require a full snapshot where this daemon keeps a stored record (``agent.get``,
``agent.list``) with pending permissions, modes and workspace placement served separately:
:func:`snapshot` joins them. Pure functions over JSON (the RPC results).

Capability flags are not reported by this daemon's providers; they are derived: every
provider streams, persists and resumes sessions, accepts MCP servers, streams reasoning and
runs tools, and modes are dynamic when the provider offers any.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from paseo_tswire import translate
from paseo_tswire.models import agent as ts

STATUSES = ("initializing", "idle", "running", "error", "closed")


def modes(views: list[dict[str, Any]]) -> list[ts.AgentMode]:
    """``ModeView`` → ``AgentMode``."""
    return [
        ts.AgentMode(
            id=str(view["id"]),
            label=str(view.get("label") or view["id"]),
            description=view.get("description")
            if isinstance(view.get("description"), str)
            else None,
        )
        for view in views
        if isinstance(view, dict) and "id" in view
    ]


def features(items: Any) -> list[ts.FeatureToggle | ts.FeatureSelect] | None:
    """Stored or listed features (the records' ``AgentFeature`` JSON) in the clients' shape;
    ``None`` when ``items`` is not a list."""
    if not isinstance(items, list):
        return None
    out: list[ts.FeatureToggle | ts.FeatureSelect] = []
    for raw in items:
        if not isinstance(raw, dict):
            continue
        common = {
            key: raw[key]
            for key in ("description", "tooltip", "icon")
            if isinstance(raw.get(key), str)
        }
        if raw.get("type") == "toggle":
            out.append(
                ts.FeatureToggle(
                    id=str(raw["id"]),
                    label=str(raw["label"]),
                    value=bool(raw.get("value")),
                    **common,
                )
            )
        elif raw.get("type") == "select":
            value = raw.get("value")
            out.append(
                ts.FeatureSelect(
                    id=str(raw["id"]),
                    label=str(raw["label"]),
                    value=value if isinstance(value, str) else None,
                    options=[
                        ts.SelectOption(
                            id=str(o["id"]),
                            label=str(o.get("label") or o["id"]),
                            description=o.get("description")
                            if isinstance(o.get("description"), str)
                            else None,
                            isDefault=o.get("isDefault")
                            if isinstance(o.get("isDefault"), bool)
                            else None,
                        )
                        for o in raw.get("options") or []
                        if isinstance(o, dict) and "id" in o
                    ],
                    **common,
                )
            )
    return out


def _persistence(raw: Any) -> ts.Persistence | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("sessionId"), str):
        return None
    native = raw.get("nativeHandle")
    metadata = raw.get("metadata")
    return ts.Persistence(
        provider=str(raw.get("provider") or ""),
        sessionId=raw["sessionId"],
        nativeHandle=native if isinstance(native, str) else None,
        metadata=metadata if isinstance(metadata, dict) else None,
    )


def _runtime(raw: Any) -> ts.RuntimeInfo | None:
    if not isinstance(raw, dict):
        return None
    extra = raw.get("extra")
    return ts.RuntimeInfo(
        provider=str(raw.get("provider") or ""),
        sessionId=_str(raw.get("sessionId")),
        model=_str(raw.get("model")),
        thinkingOptionId=_str(raw.get("thinkingOptionId")),
        modeId=_str(raw.get("modeId")),
        extra=extra if isinstance(extra, dict) else None,
    )


def snapshot(
    record: dict[str, Any],
    *,
    pending: Sequence[dict[str, Any]] = (),
    available_modes: Sequence[ts.AgentMode] = (),
) -> ts.AgentSnapshot:
    """An ``AgentRecord`` (JSON) with its pending permission requests and the modes its
    provider offers, as the clients' snapshot."""
    raw_config = record.get("config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    runtime = _runtime(record.get("runtimeInfo"))
    provider = str(record.get("provider") or "")
    status = record.get("lastStatus")
    raw_labels = record.get("labels")
    labels: dict[str, Any] = raw_labels if isinstance(raw_labels, dict) else {}
    thinking = _str(config.get("thinkingOptionId"))
    reason = record.get("attentionReason")
    mode_list = list(available_modes)
    return ts.AgentSnapshot(
        id=str(record["id"]),
        provider=provider,
        cwd=str(record.get("cwd") or ""),
        model=_str(config.get("model")) or (runtime.model if runtime else None),
        features=features(record.get("features")),
        thinkingOptionId=thinking,
        effectiveThinkingOptionId=(runtime.thinkingOptionId if runtime else None) or thinking,
        createdAt=str(record.get("createdAt") or ""),
        updatedAt=str(record.get("updatedAt") or ""),
        lastUserMessageAt=_str(record.get("lastUserMessageAt")),
        status=status if status in STATUSES else "idle",
        capabilities=ts.Capabilities(
            supportsStreaming=True,
            supportsSessionPersistence=True,
            supportsDynamicModes=bool(mode_list),
            supportsMcpServers=True,
            supportsReasoningStream=True,
            supportsToolInvocations=True,
        ),
        currentModeId=_str(record.get("lastModeId"))
        or (runtime.modeId if runtime else None)
        or _str(config.get("modeId")),
        availableModes=mode_list,
        pendingPermissions=[translate.permission(p, provider) for p in pending],
        persistence=_persistence(record.get("persistence")),
        runtimeInfo=runtime,
        lastUsage=translate.usage(record.get("lastUsage")),
        lastError=_str(record.get("lastError")),
        title=_str(record.get("title")),
        labels={str(k): str(v) for k, v in labels.items()},
        requiresAttention=record.get("requiresAttention")
        if isinstance(record.get("requiresAttention"), bool)
        else None,
        attentionReason=reason if reason in ("finished", "error", "permission") else None,
        attentionTimestamp=_str(record.get("attentionTimestamp")),
        archivedAt=_str(record.get("archivedAt")),
    )


def placement(
    cwd: str, workspace: dict[str, Any] | None, project: dict[str, Any] | None
) -> ts.ProjectPlacement:
    """Where an agent sits: its workspace's project, or its directory when it has none."""
    name = os.path.basename(cwd.rstrip("/")) or cwd
    if project is not None:
        key = _str(project.get("projectKey")) or str(project.get("projectId") or cwd)
        name = str(project.get("displayName") or name)
    else:
        key = cwd
    git = (workspace or {}).get("kind") in ("local_checkout", "worktree") or (
        project is not None and project.get("kind") == "git"
    )
    checkout_cwd = str((workspace or {}).get("cwd") or cwd)
    checkout: ts.CheckoutNotGit | ts.CheckoutGit
    if not git:
        checkout = ts.CheckoutNotGit(
            cwd=checkout_cwd, currentBranch=None, remoteUrl=None, mainRepoRoot=None
        )
    else:
        ws = workspace or {}
        owned = bool(ws.get("isPaseoOwnedWorktree")) and isinstance(ws.get("mainRepoRoot"), str)
        checkout = ts.CheckoutGit(
            cwd=checkout_cwd,
            currentBranch=_str(ws.get("branch")),
            remoteUrl=None,
            worktreeRoot=_str(ws.get("worktreeRoot")) or checkout_cwd,
            isPaseoOwnedWorktree=owned,
            mainRepoRoot=_str(ws.get("mainRepoRoot")) if owned else None,
        )
    return ts.ProjectPlacement(projectKey=key, projectName=name, checkout=checkout)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
