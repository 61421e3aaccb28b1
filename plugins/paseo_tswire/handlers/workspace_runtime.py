"""What a workspace descriptor adds to the workspace record: its ``scripts`` (``paseo.json``'s,
from ``script.list``, a service's state as the app shows it — ``lifecycle`` running while it
starts or runs, ``health`` healthy once its port answers, ``stopped`` with its exit code
otherwise) and its live Git state in ``gitRuntime`` (``workspace.gitRuntime``: uncommitted
changes, ahead/behind its base and ``origin``)."""

from __future__ import annotations

from typing import Any

from paseo_tswire.models import workspace as wm
from paseo_tswire.port import Failure


def script_payload(info: dict[str, Any]) -> wm.Script:
    status = info.get("status")
    port = info.get("port")
    return wm.Script(
        scriptName=str(info["name"]),
        type="service" if info.get("type") == "service" else "script",
        hostname=str(info.get("proxyHost") or "localhost"),
        port=port if isinstance(port, int) and port > 0 else None,
        proxyUrl=None,
        lifecycle="running" if status in ("starting", "running") else "stopped",
        health="healthy" if status == "running" else None,
        exitCode=info.get("exitCode"),
        terminalId=None,
    )


async def scripts_of(session: Any, workspace: dict[str, Any]) -> list[wm.Script]:
    """The scripts of a (live) workspace; none when it has no readable ``paseo.json`` or may
    not run it (an untrusted fork's)."""
    if workspace.get("archivedAt") or not workspace.get("cwd"):
        return []
    try:
        listed = await session.call("script.list", {"cwd": workspace["cwd"]})
    except Failure:
        return []
    return [script_payload(info) for info in listed.get("scripts") or []]


async def git_runtime_of(
    session: Any, workspace: dict[str, Any], base: wm.GitRuntime | None
) -> wm.GitRuntime | None:
    """``base`` (branch, ownership) with the checkout's live state, when it has one."""
    if base is None or workspace.get("archivedAt"):
        return base
    try:
        found = await session.call(
            "workspace.gitRuntime", {"workspaceId": workspace["workspaceId"]}
        )
    except Failure:
        return base
    return base.model_copy(
        update={
            "isDirty": found.get("isDirty"),
            "aheadBehind": wm.AheadBehind(**found["aheadBehind"])
            if found.get("aheadBehind")
            else None,
            "aheadOfOrigin": found.get("aheadOfOrigin"),
            "behindOfOrigin": found.get("behindOfOrigin"),
        }
    )


async def script_status_update(session: Any, workspace_id: str) -> None:
    """``script_status_update``: a workspace's scripts after one of its services changed."""
    try:
        workspace = (await session.call("workspace.get", {"workspaceId": workspace_id}))[
            "workspace"
        ]
    except Failure:
        return
    await session.push(
        "script_status_update",
        wm.ScriptStatus(workspaceId=workspace_id, scripts=await scripts_of(session, workspace)),
    )
