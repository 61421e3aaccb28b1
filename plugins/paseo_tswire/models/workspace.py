"""Workspace descriptors and the sidebar's messages (``WorkspaceDescriptorPayloadSchema``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from paseo_tswire.models.agent import ProjectPlacement
from paseo_tswire.models.wire import Inbound, Wire

Bucket = Literal["needs_input", "failed", "running", "attention", "done"]


class AheadBehind(Wire):
    ahead: int
    behind: int


class GitRuntime(Wire):
    currentBranch: str | None = None
    remoteUrl: str | None = None
    isPaseoOwnedWorktree: bool | None = None
    isDirty: bool | None = None
    aheadBehind: AheadBehind | None = None
    aheadOfOrigin: int | None = None
    behindOfOrigin: int | None = None


class DiffStat(Wire):
    additions: int
    deletions: int


class PullRequest(Wire):
    """``WorkspaceGitHubRuntimePayloadSchema.pullRequest``: the branch's open pull request."""

    url: str
    title: str
    state: str
    baseRefName: str
    headRefName: str
    isMerged: bool


class GitHubError(Wire):
    message: str


class GitHubRuntime(Wire):
    """``WorkspaceGitHubRuntimePayloadSchema`` as the TypeScript daemon fills it: features off
    (and nothing else) without a GitHub remote or a signed-in ``gh``, else the branch's pull
    request or the error of looking it up."""

    featuresEnabled: bool
    pullRequest: PullRequest | None
    error: GitHubError | None


class Script(Wire):
    """``WorkspaceScriptPayloadSchema``: a ``paseo.json`` script and, for a service, its state."""

    scriptName: str
    type: Literal["script", "service"]
    hostname: str
    port: int | None = Field(gt=0)
    proxyUrl: str | None
    lifecycle: Literal["running", "stopped"]
    health: Literal["healthy", "unhealthy"] | None
    exitCode: int | None
    terminalId: str | None


class Descriptor(Wire):
    id: str
    projectId: str
    projectDisplayName: str
    projectRootPath: str
    workspaceDirectory: str | None = None
    projectKind: Literal["git", "non_git", "directory"]
    workspaceKind: Literal["directory", "local_checkout", "checkout", "worktree"]
    name: str
    archivingAt: str | None
    status: Bucket
    activityAt: str | None
    diffStat: DiffStat | None
    scripts: list[Script] = Field(default_factory=list)
    gitRuntime: GitRuntime | None
    githubRuntime: GitHubRuntime | None
    project: ProjectPlacement | None = None


class ScriptStatus(Wire):
    """``script_status_update``'s payload."""

    workspaceId: str
    scripts: list[Script]


class PageInfo(Wire):
    nextCursor: str | None
    prevCursor: str | None
    hasMore: bool


class FetchWorkspaces(Wire):
    requestId: str
    subscriptionId: str | None = None
    entries: list[Descriptor]
    pageInfo: PageInfo


class Upsert(Wire):
    kind: Literal["upsert"] = "upsert"
    workspace: Descriptor


class Remove(Wire):
    kind: Literal["remove"] = "remove"
    id: str


class OpenProject(Wire):
    requestId: str
    workspace: Descriptor | None
    error: str | None


class ArchiveWorkspace(Wire):
    requestId: str
    workspaceId: str
    archivedAt: str | None
    error: str | None


class Filter(Inbound):
    query: str | None = None
    projectId: str | None = None
    idPrefix: str | None = None


class Sort(Inbound):
    key: Literal["status_priority", "activity_at", "name", "project_id"]
    direction: Literal["asc", "desc"]


class Page(Inbound):
    limit: int = Field(ge=1, le=200)
    cursor: str | None = Field(default=None, min_length=1)


class Subscribe(Inbound):
    subscriptionId: str | None = None


class FetchRequest(Inbound):
    requestId: str
    filter: Filter | None = None
    sort: list[Sort] | None = None
    page: Page | None = None
    subscribe: Subscribe | None = None


class OpenRequest(Inbound):
    requestId: str
    cwd: str


class ArchiveRequest(Inbound):
    requestId: str
    workspaceId: str


WORKSPACE_OUTBOUND: dict[str, type[Wire]] = {
    "fetch_workspaces_response": FetchWorkspaces,
    "open_project_response": OpenProject,
    "archive_workspace_response": ArchiveWorkspace,
    "script_status_update": ScriptStatus,
}
"""``workspace_update`` has two shapes (see :func:`paseo_tswire.envelope.validate_outbound`)."""
