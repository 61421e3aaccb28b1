"""Record factories: fully populated records as JSON-ready data, including fields this
version does not know.

Public so crash harnesses and benchmarks build the same records as the suite.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    AgentRecord,
    GitPluginSource,
    NpmPluginSource,
    ScheduleRecord,
    TimelineEntry,
    new_agent_id,
    new_project_id,
    new_schedule_id,
    new_workspace_id,
)
from paseo_hookspecs.store import Page

_EPOCH = datetime(2025, 3, 1, 9, 0, 0, tzinfo=UTC)


def iso(seconds: float) -> str:
    """A deterministic ISO 8601 UTC timestamp ``seconds`` after a fixed epoch (``...Z``)."""
    moment = _EPOCH + timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _apply(
    data: dict[str, Any], overrides: Mapping[str, Any], without: Iterable[str]
) -> dict[str, Any]:
    data.update(overrides)
    for name in without:
        data.pop(name, None)
    return data


def agent_data(
    agent_id: str | None = None,
    *,
    cwd: str = "/Users/alice/code/acme-api",
    workspace_id: str = "wks_00000000000000a1",
    created_at: str | None = None,
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated agent record as stored (every declared field, nested unknown fields and
    top-level unknown fields a newer writer adds). ``overrides`` replace top-level fields;
    ``without`` drops them."""
    agent_id = agent_id or new_agent_id()
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "id": agent_id,
        "provider": "claude",
        "cwd": cwd,
        "workspaceId": workspace_id,
        "createdAt": created,
        "updatedAt": created,
        "lastActivityAt": created,
        "lastUserMessageAt": created,
        "title": "Fix the login redirect",
        "labels": {"paseo.parent-agent-id": "c91e4a07-5d2b-4f3a-8e16-7b9d0c4f2a85", "team": "core"},
        "lastStatus": "idle",
        "lastModeId": "acceptEdits",
        "config": {
            "title": "Fix the login redirect",
            "modeId": "acceptEdits",
            "model": "claude-sonnet-4",
            "thinkingOptionId": "high",
            "featureValues": {"fast": True},
            "providerOptions": {"maxTurns": 40},
            "extra": {"claude": {"permissionPromptTool": "mcp__paseo__permission"}},
            "systemPrompt": "Be terse. Prefer small diffs.",
            "mcpServers": {"paseo": {"type": "http", "url": "http://127.0.0.1:6767/mcp"}},
            "futureConfigField": ["kept", 1, 2.5, None],
        },
        "runtimeInfo": {
            "provider": "claude",
            "sessionId": "sess-7f3a",
            "model": "claude-sonnet-4",
            "thinkingOptionId": "high",
            "modeId": "acceptEdits",
            "extra": {"pid": 4242, "version": "1.0.71"},
        },
        "features": [
            {
                "type": "toggle",
                "id": "fast",
                "label": "Fast mode",
                "description": "Fewer reasoning tokens",
                "tooltip": "Trades depth for speed",
                "icon": "zap",
                "value": True,
            },
            {
                "type": "select",
                "id": "effort",
                "label": "Effort",
                "description": "Reasoning effort",
                "tooltip": "How hard to think",
                "icon": "brain",
                "value": "high",
                "options": [
                    {
                        "id": "low",
                        "label": "Low",
                        "description": "Quick",
                        "family": "effort",
                        "isDefault": False,
                        "metadata": {"tokens": 1024},
                    },
                    {"id": "high", "label": "High", "isDefault": True, "badge": "new"},
                ],
            },
        ],
        "persistence": {
            "provider": "claude",
            "sessionId": "sess-7f3a",
            "nativeHandle": {"resume": "tok_9c2e", "turns": [1, 2, 3]},
            "metadata": {"cwd": cwd},
        },
        "lastError": None,
        "requiresAttention": True,
        "attentionReason": "permission",
        "attentionTimestamp": created,
        "internal": False,
        "archivedAt": None,
        # Fields newer TypeScript writers add: kept verbatim and written back.
        "owner": {"kind": "hub", "relationshipId": "rel_01", "principal": "héllo ✓"},
        "titleManuallySet": True,
        "queuedPrompts": [{"id": "q1", "text": "then run the tests", "at": created}],
    }
    return _apply(data, overrides, without)


def timeline_entry_data(
    agent_id: str, seq: int, *, epoch: str = "ep-1", **overrides: Any
) -> dict[str, Any]:
    """A timeline entry with a realistic event payload and an unknown top-level field."""
    data: dict[str, Any] = {
        "agentId": agent_id,
        "seq": seq,
        "epoch": epoch,
        "timestamp": iso(seq),
        "event": {
            "type": "timeline_item",
            "item": {
                "type": "assistant_message",
                "id": f"msg-{seq}",
                "text": f"step {seq}: ✓ done",
                "usage": {"inputTokens": 10 * seq, "cached": None},
            },
        },
        "source": "provider",
    }
    data.update(overrides)
    return data


def schedule_data(
    schedule_id: str | None = None,
    *,
    created_at: str | None = None,
    status: str = "active",
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated schedule (cron cadence, new-agent target, two runs, unknown fields)."""
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "id": schedule_id or new_schedule_id(),
        "name": "Nightly dependency audit",
        "prompt": "Audit dependencies and open a PR for safe upgrades.",
        "cadence": {"type": "cron", "expression": "0 3 * * *", "timezone": "Europe/Paris"},
        "target": {
            "type": "new-agent",
            "config": {
                "provider": "codex",
                "cwd": "/Users/alice/code/acme-api",
                "modeId": "auto",
                "model": "gpt-5",
                "thinkingOptionId": "medium",
                "archiveOnFinish": True,
                "isolation": "worktree",
                "title": "Dependency audit",
                "providerOptions": {"sandbox": "workspace-write"},
                "featureValues": {"web": False},
                "systemPrompt": "Only touch lockfiles.",
                "mcpServers": {},
                "futureTargetField": 7,
            },
        },
        "status": status,
        "createdAt": created,
        "updatedAt": created,
        "nextRunAt": iso(86_400),
        "lastRunAt": iso(3_600),
        "pausedAt": None,
        "expiresAt": iso(86_400 * 30),
        "maxRuns": 30,
        "runs": [
            {
                "id": "run-1",
                "scheduledFor": iso(3_600),
                "startedAt": iso(3_601),
                "endedAt": iso(3_900),
                "status": "succeeded",
                "agentId": "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14",
                "workspaceId": "wks_00000000000000a1",
                "output": "Opened PR #42",
                "error": None,
                "durationMs": 299_000,
            },
            {
                "id": "run-2",
                "scheduledFor": iso(7_200),
                "startedAt": iso(7_201),
                "endedAt": None,
                "status": "running",
                "agentId": None,
                "output": None,
                "error": None,
            },
        ],
        "createdBy": {"kind": "cli"},
    }
    return _apply(data, overrides, without)


def project_data(
    project_id: str | None = None,
    *,
    root: str = "/Users/alice/code/acme-api",
    created_at: str | None = None,
    archived_at: str | None = None,
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated project record (with an unknown field)."""
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "projectId": project_id or new_project_id(),
        "rootPath": root,
        "kind": "git",
        "displayName": root.rstrip("/").rsplit("/", 1)[-1] or root,
        "projectKey": "remote:github.com/acme/api",
        "customName": "Acme API",
        "customIconRevision": "rev-3",
        "createdAt": created,
        "updatedAt": created,
        "archivedAt": archived_at,
        "sortHint": 3,
    }
    return _apply(data, overrides, without)


def workspace_data(
    workspace_id: str | None = None,
    *,
    project_id: str = "prj_00000000000000a1",
    cwd: str = "/Users/alice/code/acme-api",
    created_at: str | None = None,
    archived_at: str | None = None,
    labels: list[str] | None = None,
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated workspace record. ``labels`` is omitted unless given (assigned labels
    must exist in the catalog)."""
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "workspaceId": workspace_id or new_workspace_id(),
        "projectId": project_id,
        "cwd": cwd,
        "kind": "worktree",
        "displayName": "fix-login",
        "title": "Login redirect fix",
        "branch": "fix/login",
        "worktreeRoot": cwd,
        "baseBranch": "origin/main",
        "isPaseoOwnedWorktree": True,
        "mainRepoRoot": "/Users/alice/code/acme-api",
        "createdAt": created,
        "updatedAt": created,
        "archivedAt": archived_at,
        "autoArchivedChangeRequestUrl": None,
        "pinnedAt": created,
        "untrustedSource": {
            "kind": "change_request",
            "forge": "github",
            "number": 42,
            "headRepository": "mallory/acme-api",
            "headSha": "0badc0de",
        },
        "setupState": {"ran": True},
    }
    if labels is not None:
        data["labels"] = labels
    return _apply(data, overrides, without)


def managed_process_data(record_id: str | None = None, **overrides: Any) -> dict[str, Any]:
    """A fully populated managed-process record (daemon block, identities, unknown fields)."""
    data: dict[str, Any] = {
        "id": record_id or str(uuid.uuid4()),
        "owner": {"provider": "opencode", "kind": "server", "note": "sidecar"},
        "pid": 31337,
        "command": "/usr/local/bin/opencode",
        "args": ["serve", "--port", "0"],
        "metadata": {"port": 41234, "nested": {"a": [1, 2]}},
        "identity": {
            "commandLine": "/usr/local/bin/opencode serve --port 0",
            "startedAt": iso(10),
            "startTimeTicks": "123456",
            "bootId": "b0a7-1d",
        },
        "daemon": {
            "instanceId": "inst-1",
            "pid": 4000,
            "identity": {
                "commandLine": "paseo daemon start",
                "startedAt": iso(1),
                "startTimeTicks": None,
                "bootId": None,
            },
            "bootId": "b0a7-1d",
            "recordedAt": iso(11),
        },
        "createdAt": iso(10),
        "restartCount": 0,
    }
    data.update(overrides)
    return data


def plugin_source_data(kind: str = "git", **overrides: Any) -> dict[str, Any]:
    """A plugin source record (``git`` with a remote, or ``npm``) with legacy unknown fields."""
    if kind == "git":
        data: dict[str, Any] = {
            "kind": "git",
            "remote": "https://github.com/acme/paseo-plugin-lint.git",
            "selector": "v1.2.0",
        }
    else:
        data = {"kind": "npm", "packageName": "@acme/paseo-plugin-lint"}
    data.update(overrides)
    return data


def _plugin_source(data: Mapping[str, Any]) -> Any:
    if data.get("kind", "git") == "git":
        return GitPluginSource.model_validate(data)
    return NpmPluginSource.model_validate(data)


def _schedules_page(
    store: Store, status: str, cursor: str | None, *, limit: int
) -> Awaitable[Page[ScheduleRecord]]:
    return store.schedules.list(status=status, cursor=cursor, limit=limit)


def _rng(seed: int) -> random.Random:
    """A seeded generator: test data must be reproducible, not unpredictable."""
    return random.Random(seed)  # noqa: S311


def _agent(data: Mapping[str, Any]) -> AgentRecord:
    return AgentRecord.model_validate(data)


def _entries(agent_id: str, seqs: Iterable[int], **overrides: Any) -> list[TimelineEntry]:
    return [
        TimelineEntry.model_validate(timeline_entry_data(agent_id, seq, **overrides))
        for seq in seqs
    ]
