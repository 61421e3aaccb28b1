"""What a workspace descriptor adds to the workspace record: its ``scripts`` (``paseo.json``'s,
from ``script.list``, a service's state as the app shows it — ``lifecycle`` running while it
starts or runs, ``health`` healthy once its port answers, ``stopped`` with its exit code
otherwise) and its live Git state in ``gitRuntime`` (``workspace.gitRuntime``: uncommitted
changes, ahead/behind its base and ``origin``), ``diffStat`` (lines changed since the base) and
``githubRuntime`` (the branch's pull request through ``gh``, when ``origin`` is on GitHub)."""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Runtime:
    """What a checkout's live state adds to its descriptor."""

    git: wm.GitRuntime | None
    diff_stat: wm.DiffStat | None
    github: wm.GitHubRuntime


GITHUB_OFF = wm.GitHubRuntime(featuresEnabled=False, pullRequest=None, error=None)
"""What the TypeScript daemon sends for a workspace without a GitHub remote, or when ``gh`` is
missing or not signed in."""
GITHUB_TTL = 60.0
"""How long a session reuses a pull request lookup (``gh pr view`` asks GitHub over the
network; the TypeScript daemon polls it too rather than asking on every descriptor)."""
GITHUB_KEPT = 64


def is_github(remote_url: str | None) -> bool:
    """Whether ``origin`` is on GitHub (``https://github.com/…``, ``git@github.com:…``,
    ``ssh://git@github.com/…``)."""
    if not remote_url:
        return False
    host = re.sub(r"^[a-z+]+://", "", remote_url.strip().lower())
    host = host.split("@", 1)[-1]
    return re.split(r"[:/]", host, maxsplit=1)[0] in ("github.com", "www.github.com")


async def _github(session: Any, cwd: str) -> wm.GitHubRuntime:
    """The branch's pull request through ``git.pr.status`` (kept :data:`GITHUB_TTL` per
    session): features off when ``gh`` is unavailable, the error's message when the lookup
    failed otherwise — the TypeScript daemon's ``loadGitHubSnapshot``."""
    kept: OrderedDict[str, tuple[float, wm.GitHubRuntime]] = session.extra.setdefault(
        "github_runtime", OrderedDict()
    )
    now = time.monotonic()
    found = kept.get(cwd)
    if found is not None and now - found[0] <= GITHUB_TTL:
        return found[1]
    try:
        answer = await session.call("git.pr.status", {"cwd": cwd})
    except Failure as exc:
        code = getattr(exc, "code", None)
        value = (
            GITHUB_OFF
            if code in ("github_unavailable", "access_denied", "not_allowed")
            else wm.GitHubRuntime(
                featuresEnabled=True,
                pullRequest=None,
                error=wm.GitHubError(message=str(getattr(exc, "message", None) or exc)),
            )
        )
    else:
        pr = answer.get("pullRequest")
        value = wm.GitHubRuntime(
            featuresEnabled=True,
            pullRequest=wm.PullRequest(**{k: pr[k] for k in wm.PullRequest.model_fields})
            if pr
            else None,
            error=None,
        )
    kept[cwd] = (now, value)
    kept.move_to_end(cwd)
    while len(kept) > GITHUB_KEPT:
        kept.popitem(last=False)
    return value


async def runtime_of(
    session: Any, workspace: dict[str, Any], base: wm.GitRuntime | None
) -> Runtime:
    """``base`` (branch, ownership) with the checkout's live state — ``workspace.gitRuntime``'s
    changes, ahead/behind, ``origin`` and lines changed since the base — and its GitHub state,
    when it has a checkout; a non-Git or archived workspace keeps ``base`` with no diff stat
    and GitHub off, as the TypeScript daemon's snapshot of a non-Git directory says."""
    if base is None or workspace.get("archivedAt"):
        return Runtime(base, None, GITHUB_OFF)
    try:
        found = await session.call(
            "workspace.gitRuntime", {"workspaceId": workspace["workspaceId"]}
        )
    except Failure:
        return Runtime(base, None, GITHUB_OFF)
    remote = found.get("remoteUrl")
    stat = found.get("diffStat")
    git = base.model_copy(
        update={
            "remoteUrl": remote,
            "isDirty": found.get("isDirty"),
            "aheadBehind": wm.AheadBehind(**found["aheadBehind"])
            if found.get("aheadBehind")
            else None,
            "aheadOfOrigin": found.get("aheadOfOrigin"),
            "behindOfOrigin": found.get("behindOfOrigin"),
        }
    )
    github = await _github(session, str(workspace["cwd"])) if is_github(remote) else GITHUB_OFF
    return Runtime(git, wm.DiffStat(**stat) if stat else None, github)


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
