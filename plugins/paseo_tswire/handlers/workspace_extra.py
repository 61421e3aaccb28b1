"""The add-project picker and a workspace's worktree, setup and scripts:
``directory_suggestions_request`` (``fs.suggest``), ``create_paseo_worktree_request``
(``worktree.create``), ``workspace_setup_status_request`` (``worktree.setupStatus``) and
``start_workspace_script_request`` (a service through ``script.start``; a plain script runs in
a new terminal of the workspace, as the TypeScript daemon runs it, with the environment
``script.resolve`` gives). Each goes through the session's JSON-RPC methods with its access.
"""

from __future__ import annotations

import shlex
from typing import Any

from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers import workspaces
from paseo_tswire.models import files as fm
from paseo_tswire.models import inbound as req
from paseo_tswire.models import timeline as tl
from paseo_tswire.port import Failure


async def directory_suggestions(
    session: ClientSession, msg: fm.DirectorySuggestionsRequest
) -> None:
    params: dict[str, Any] = {"query": msg.query}
    if msg.cwd:
        params["cwd"] = msg.cwd
    if msg.includeFiles is not None:
        params["includeFiles"] = msg.includeFiles
    if msg.includeDirectories is not None:
        params["includeDirectories"] = msg.includeDirectories
    if msg.limit is not None:
        params["limit"] = msg.limit
    try:
        found = await session.call("fs.suggest", params)
        reply = fm.DirectorySuggestions(
            directories=found["directories"],
            entries=[fm.SuggestionEntry(**e) for e in found["entries"]],
            error=None,
            requestId=msg.requestId,
        )
    except Failure as exc:
        reply = fm.DirectorySuggestions(
            directories=[], entries=[], error=exc.message, requestId=msg.requestId
        )
    await session.push("directory_suggestions_response", reply)


def _create_params(msg: fm.CreateWorktreeRequest) -> dict[str, Any]:
    params: dict[str, Any] = {"cwd": msg.cwd}
    if msg.githubPrNumber is not None:
        params.update(mode="change-request", changeRequest=msg.githubPrNumber)
    elif msg.action == "checkout" and msg.refName:
        params.update(mode="checkout-branch", branch=msg.refName)
    elif msg.refName:
        params["base"] = msg.refName
    if msg.worktreeSlug:
        params["slug"] = msg.worktreeSlug
    prompt = (msg.firstAgentContext.prompt if msg.firstAgentContext else None) or msg.nameContext
    if prompt:
        params["prompt"] = prompt
    return params


async def worktree_for_agent(
    session: ClientSession, cwd: str, git: req.GitSetup, prompt: str | None
) -> dict[str, Any]:
    """A new agent's worktree (``create_agent_request`` with ``git.createWorktree``): created
    through ``worktree.create`` from ``cwd``'s project; returns its workspace record."""
    params = _create_params(
        fm.CreateWorktreeRequest(
            requestId="-",
            cwd=cwd,
            worktreeSlug=git.worktreeSlug,
            refName=git.refName or git.baseBranch,
            action=git.action,
            githubPrNumber=git.githubPrNumber,
            nameContext=prompt,
        )
    )
    if git.createNewBranch and git.newBranchName and "mode" not in params:
        params["branch"] = git.newBranchName
    created = await session.call("worktree.create", params)
    workspace: dict[str, Any] = created["workspace"]
    await workspaces.push_workspace(session, str(workspace["workspaceId"]))
    return workspace


async def create_worktree(session: ClientSession, msg: fm.CreateWorktreeRequest) -> None:
    progress = SetupProgress(session)
    session.listeners.append(progress.on_notification)
    try:
        await session.follow(["workspaces"])
        created = await session.call("worktree.create", _create_params(msg))
    except Failure as exc:
        code = getattr(exc, "code", None)
        await session.push(
            "create_paseo_worktree_response",
            fm.CreateWorktree(
                workspace=None,
                error=exc.message,
                errorCode=code if isinstance(code, str) else None,
                setupTerminalId=None,
                requestId=msg.requestId,
            ),
        )
        return
    finally:
        session.listeners.remove(progress.on_notification)
    workspace_id = str(created["workspace"]["workspaceId"])
    # The stream's last progress may still be queued behind this answer: the final state is
    # pushed once more, so the app's setup panel never stays at "running".
    final = await _snapshot(session, workspace_id)
    if final is not None:
        await session.push(
            "workspace_setup_progress",
            fm.SetupProgress(workspaceId=workspace_id, **final.model_dump()),
        )
    found = await workspaces.descriptors(session, workspace_id)
    await session.push(
        "create_paseo_worktree_response",
        fm.CreateWorktree(
            workspace=found[0] if found else None,
            error=None,
            setupTerminalId=None,
            requestId=msg.requestId,
        ),
    )
    await workspaces.push_workspace(session, workspace_id)


def setup_snapshot(run: dict[str, Any]) -> fm.SetupSnapshot:
    """A kept setup run (``worktree.setupStatus``) as ``WorkspaceSetupSnapshotSchema``."""
    commands = [
        tl.WorktreeSetupCommand(
            index=c["index"],
            command=c["command"],
            cwd=c["cwd"],
            log=c["log"],
            status=c["status"],
            exitCode=c["exitCode"],
            durationMs=c.get("durationMs"),
        )
        for c in run["commands"]
    ]
    first_cwd = commands[0].cwd if commands else ""
    detail = tl.WorktreeSetupDetail(
        worktreePath=str(run.get("path") or first_cwd),
        branchName=str(run.get("branch") or ""),
        log=run["log"],
        commands=commands,
        truncated=run["truncated"] or None,
    )
    return fm.SetupSnapshot(status=run["status"], detail=detail, error=run["error"])


async def _snapshot(session: ClientSession, workspace_id: str) -> fm.SetupSnapshot | None:
    run = (await session.call("worktree.setupStatus", {"workspaceId": workspace_id}))["setup"]
    return setup_snapshot(run) if run else None


async def setup_status(session: ClientSession, msg: fm.WorkspaceRef) -> None:
    try:
        snapshot = await _snapshot(session, msg.workspaceId)
    except Failure:
        snapshot = None  # an unknown workspace has no setup, as the TypeScript daemon answers
    await session.push(
        "workspace_setup_status_response",
        fm.SetupStatus(requestId=msg.requestId, workspaceId=msg.workspaceId, snapshot=snapshot),
    )


class SetupProgress:
    """``workspace_setup_progress`` pushes while this session creates a worktree: each setup
    command's start and end (``worktree.progress`` on the ``workspaces`` stream) sends the
    setup's snapshot as the daemon keeps it (its output so far included)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        event = params.get("event") or {}
        if method != "worktree.progress" or params.get("phase") != "setup":
            return
        if event.get("type") not in ("command_started", "command_completed"):
            return
        workspace_id = str(params.get("workspaceId") or "")
        try:
            snapshot = await _snapshot(self.session, workspace_id)
        except Failure:
            return
        if snapshot is not None:
            await self.session.push(
                "workspace_setup_progress",
                fm.SetupProgress(workspaceId=workspace_id, **snapshot.model_dump()),
            )


async def _run_in_terminal(session: ClientSession, cwd: str, name: str) -> str:
    resolved = await session.call("script.resolve", {"cwd": cwd, "name": name})
    terminal = await session.call("terminal.create", {"cwd": resolved["cwd"]})
    terminal_id = str(terminal["terminal"]["terminalId"])
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(resolved["env"].items()))
    line = (
        f"env {exports} sh -c {shlex.quote(resolved['command'])}\n"
        if exports
        else (resolved["command"] + "\n")
    )
    # Typed into the terminal's shell (the user sees and owns it), as create_terminal's command.
    await session.call("terminal.input", {"terminalId": terminal_id, "data": line})
    return terminal_id


async def start_script(session: ClientSession, msg: fm.StartScriptRequest) -> None:
    terminal_id: str | None = None
    error: str | None = None
    try:
        workspace = (await session.call("workspace.get", {"workspaceId": msg.workspaceId}))[
            "workspace"
        ]
        cwd = str(workspace["cwd"])
        listed = await session.call("script.list", {"cwd": cwd})
        script = next((s for s in listed["scripts"] if s["name"] == msg.scriptName), None)
        if script is None:
            error = f"Script '{msg.scriptName}' not found in paseo.json"
        elif script["type"] == "service":
            await session.call("script.start", {"cwd": cwd, "name": msg.scriptName})
        else:
            terminal_id = await _run_in_terminal(session, cwd, msg.scriptName)
    except Failure as exc:
        error = exc.message
    await session.push(
        "start_workspace_script_response",
        fm.StartScript(
            requestId=msg.requestId,
            workspaceId=msg.workspaceId,
            scriptName=msg.scriptName,
            terminalId=terminal_id,
            error=error,
        ),
    )
    if error is None:
        await workspaces.push_workspace(session, msg.workspaceId)


TABLE: dict[str, tuple[type[Any], Any]] = {
    "directory_suggestions_request": (fm.DirectorySuggestionsRequest, directory_suggestions),
    "create_paseo_worktree_request": (fm.CreateWorktreeRequest, create_worktree),
    "workspace_setup_status_request": (fm.WorkspaceRef, setup_status),
    "start_workspace_script_request": (fm.StartScriptRequest, start_script),
}
"""This module's part of :data:`paseo_tswire.dispatch.TABLE`."""
