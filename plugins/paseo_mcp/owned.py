"""The schedule and worktree tools, within the caller's reach.

An agent reaches the schedules and worktrees it created, and those of the agents it reaches
(:meth:`~paseo_mcp.rules.CallerRules.reaches_owned`); the user's only with ``callerScope:
all``. Whoever creates one through these tools is recorded (:mod:`paseo_mcp.owners`) before
the tool answers. A schedule's ``new-agent`` target is pinned as ``create_agent`` pins a child:
the caller's directory, a mode no higher than the caller's own, the parent label, and nothing
of the caller's choosing that would run with the user's trust (system prompt, MCP servers,
provider options, a profile, a worktree).
"""

from __future__ import annotations

import os
from typing import Any

from paseo_hookspecs.errors import AccessDenied, NotFound, PaseoError
from paseo_hookspecs.records import ScheduleRecord
from pydantic import BaseModel

from paseo_mcp.caller import PARENT_LABEL, McpCaller
from paseo_mcp.handlers import Tooling
from paseo_mcp.inputs import (
    ArchiveWorktreeInput,
    CreateScheduleInput,
    CreateWorktreeInput,
    ListSchedulesInput,
    ListWorktreesInput,
    ScheduleRef,
)


def _json(model: BaseModel) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True)
    return data


NEW_AGENT_FIELDS = frozenset(
    {"provider", "cwd", "modeId", "model", "thinkingOptionId", "title", "archiveOnFinish"}
)
"""What a caller may set on a schedule's new agent: what ``create_agent`` takes, plus the
caller's own directory and a mode it is allowed (checked)."""


def _same_directory(given: str, own: str) -> bool:
    return os.path.realpath(given) == os.path.realpath(own)


def _within(given: str, own: str) -> bool:
    path, root = os.path.realpath(given), os.path.realpath(own)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


# ------------------------------------------------------------------------------ schedules


async def _new_agent_config(t: Tooling, caller: McpCaller, given: Any) -> dict[str, Any]:
    if not isinstance(given, dict):
        given = {}
    config = {key: value for key, value in given.items() if value is not None}
    refused = sorted(set(config) - NEW_AGENT_FIELDS)
    if refused:
        raise AccessDenied(
            f"a schedule's new agent may not set {', '.join(refused)}: it is made like "
            "create_agent makes a child (your directory, your mode at most, no system prompt, "
            "MCP servers, provider options, profile or worktree)"
        )
    cwd = config.get("cwd")
    if isinstance(cwd, str) and not _same_directory(cwd, caller.cwd):
        raise AccessDenied(
            f"a schedule's new agent works in your directory ({caller.cwd}), not {cwd!r}"
        )
    provider = config.get("provider")
    if not isinstance(provider, str) or not provider:
        catalog = t.ports.providers
        provider = catalog.default_provider() if catalog is not None else None
    mode = config.get("modeId")
    if isinstance(mode, str) and provider:
        await t.rules.check_mode(caller, provider, mode)
    elif mode is not None:
        raise AccessDenied("a schedule's new agent needs a provider to check its mode against")
    else:
        mode = await t.rules.inherited_mode(caller, provider or "")
    pinned: dict[str, Any] = {
        **config,
        "cwd": caller.cwd,
        "labels": {PARENT_LABEL: caller.agent_id},
    }
    if provider:
        pinned["provider"] = provider
    if mode is not None:
        pinned["modeId"] = mode
    return pinned


async def _schedule(t: Tooling, caller: McpCaller, reference: str) -> ScheduleRecord:
    """The schedule ``reference`` names, when the caller may reach it."""
    schedule = await t.ports.need_schedules().get(reference)
    if not await t.rules.reaches_owned(caller, t.owners.owner("schedules", schedule.id)):
        raise AccessDenied(
            f"schedule {schedule.id} was not created by you ({caller.agent_id}) or an agent "
            f"you reach, and callerScope ({t.rules.scope()}) does not let you reach it"
        )
    return schedule


async def create_schedule(t: Tooling, caller: McpCaller, args: CreateScheduleInput) -> Any:
    spec = args.model_dump(exclude_none=True)
    target = dict(spec["target"])
    if target.get("type") == "new-agent":
        target["config"] = await _new_agent_config(t, caller, target.get("config"))
    elif isinstance(target.get("agentId"), str):
        target["agentId"] = (await t.rules.target(caller, target["agentId"])).id
    spec["target"] = target
    created = await t.ports.need_schedules().create(spec)
    t.owners.record("schedules", created.id, caller.agent_id)
    return {"schedule": _json(created)}


async def list_schedules(t: Tooling, caller: McpCaller, args: ListSchedulesInput) -> Any:
    listed = await t.ports.need_schedules().list(args.status)
    shown = [
        schedule
        for schedule in listed
        if await t.rules.reaches_owned(caller, t.owners.owner("schedules", schedule.id))
    ]
    return {"schedules": [_json(schedule) for schedule in shown]}


async def inspect_schedule(t: Tooling, caller: McpCaller, args: ScheduleRef) -> Any:
    return {"schedule": _json(await _schedule(t, caller, args.scheduleId))}


async def pause_schedule(t: Tooling, caller: McpCaller, args: ScheduleRef) -> Any:
    schedule = await _schedule(t, caller, args.scheduleId)
    return {"schedule": _json(await t.ports.need_schedules().pause(schedule.id))}


async def resume_schedule(t: Tooling, caller: McpCaller, args: ScheduleRef) -> Any:
    schedule = await _schedule(t, caller, args.scheduleId)
    return {"schedule": _json(await t.ports.need_schedules().resume(schedule.id))}


async def delete_schedule(t: Tooling, caller: McpCaller, args: ScheduleRef) -> Any:
    schedule = await _schedule(t, caller, args.scheduleId)
    deleted = await t.ports.need_schedules().delete(schedule.id)
    t.owners.forget("schedules", deleted)
    return {"scheduleId": deleted}


# ------------------------------------------------------------------------------ worktrees


async def list_worktrees(t: Tooling, caller: McpCaller, args: ListWorktreesInput) -> Any:
    listed = await t.ports.need_worktrees().list(args.projectId)
    shown = []
    for row in listed.get("worktrees", []):
        workspace = row.get("workspaceId") if isinstance(row, dict) else None
        owner = t.owners.owner("workspaces", workspace) if isinstance(workspace, str) else None
        if await t.rules.reaches_owned(caller, owner):
            shown.append(row)
    return {**listed, "worktrees": shown}


async def create_worktree(t: Tooling, caller: McpCaller, args: CreateWorktreeInput) -> Any:
    cwd = args.cwd or caller.cwd
    if t.rules.scope() != "all" and not _within(cwd, caller.cwd):
        raise AccessDenied(
            f"you make worktrees of your own project (your directory {caller.cwd}), not of "
            f"{cwd!r} (callerScope {t.rules.scope()})"
        )
    created = await t.ports.need_worktrees().create(
        cwd,
        mode="change-request" if args.mode == "checkout-pr" else args.mode,
        branch=args.branch,
        base=args.base,
        change_request=args.prNumber,
    )
    workspace = (created.get("workspace") or {}).get("workspaceId")
    # A reused worktree was made by an earlier identical request, maybe the user's: only a
    # new one becomes the caller's.
    if isinstance(workspace, str) and not created.get("reused"):
        t.owners.record("workspaces", workspace, caller.agent_id)
    return created


async def archive_worktree(t: Tooling, caller: McpCaller, args: ArchiveWorktreeInput) -> Any:
    owner = t.owners.owner("workspaces", args.workspaceId)
    if not await t.rules.reaches_owned(caller, owner):
        # An unknown id is not_found, as the port says it; a known one is not the caller's.
        if owner is None and t.rules.scope() != "all":
            await _exists_or_not_found(t, args.workspaceId)
        raise AccessDenied(
            f"worktree {args.workspaceId} was not created by you ({caller.agent_id}) or an "
            f"agent you reach, and callerScope ({t.rules.scope()}) does not let you reach it"
        )
    archived = await t.ports.need_worktrees().archive(args.workspaceId, force=args.force)
    t.owners.forget("workspaces", args.workspaceId)
    return archived


async def _exists_or_not_found(t: Tooling, workspace_id: str) -> None:
    try:
        listed = await t.ports.need_worktrees().list()
    except PaseoError:
        return
    ids = {row.get("workspaceId") for row in listed.get("worktrees", []) if isinstance(row, dict)}
    if workspace_id not in ids:
        raise NotFound(f"no worktree workspace {workspace_id!r}")
