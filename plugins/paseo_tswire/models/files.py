"""Files, editors and the workspace extras the app asks for (``FileExplorerResponseSchema``,
``FileDownloadTokenResponseSchema``, ``ProjectIconResponseSchema``, the editor targets',
``DirectorySuggestionsResponseSchema``, ``CreatePaseoWorktreeResponseSchema``, the workspace
setup and script messages), and their requests."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from paseo_tswire.models.timeline import WorktreeSetupDetail
from paseo_tswire.models.wire import Inbound, Wire
from paseo_tswire.models.workspace import Descriptor

# ---------------------------------------------------------------- requests


class FileExplorerRequest(Inbound):
    requestId: str
    cwd: str
    path: str | None = None
    mode: Literal["list", "file"]
    acceptBinary: bool | None = None


class CwdRequest(Inbound):
    requestId: str
    cwd: str


class DownloadTokenRequest(Inbound):
    requestId: str
    cwd: str
    path: str


class EditorsRequest(Inbound):
    requestId: str


class OpenInEditorRequest(Inbound):
    requestId: str
    path: str
    editorId: str = Field(min_length=1)


class DirectorySuggestionsRequest(Inbound):
    requestId: str
    query: str
    cwd: str | None = None
    includeFiles: bool | None = None
    includeDirectories: bool | None = None
    limit: int | None = Field(default=None, ge=1, le=100)


class FirstAgentContext(Inbound):
    prompt: str | None = None


class CreateWorktreeRequest(Inbound):
    requestId: str
    cwd: str
    worktreeSlug: str | None = None
    nameContext: str | None = None
    firstAgentContext: FirstAgentContext | None = None
    refName: str | None = Field(default=None, min_length=1)
    action: Literal["branch-off", "checkout"] | None = None
    githubPrNumber: int | None = Field(default=None, gt=0)


class WorkspaceRef(Inbound):
    requestId: str
    workspaceId: str


class StartScriptRequest(Inbound):
    requestId: str
    workspaceId: str
    scriptName: str


# ---------------------------------------------------------------- responses


class ExplorerEntry(Wire):
    name: str
    path: str
    kind: Literal["file", "directory"]
    size: int
    modifiedAt: str


class ExplorerDirectory(Wire):
    path: str
    entries: list[ExplorerEntry]


class ExplorerFile(Wire):
    path: str
    kind: Literal["text", "image", "binary"]
    encoding: Literal["utf-8", "base64", "none"]
    content: str | None = None
    mimeType: str | None = None
    size: int
    modifiedAt: str


class FileExplorer(Wire):
    cwd: str
    path: str
    mode: Literal["list", "file"]
    directory: ExplorerDirectory | None
    file: ExplorerFile | None
    error: str | None
    requestId: str


class Icon(Wire):
    data: str
    mimeType: str


class ProjectIcon(Wire):
    cwd: str
    icon: Icon | None
    error: str | None
    requestId: str


class DownloadToken(Wire):
    cwd: str
    path: str
    token: str | None
    fileName: str | None
    mimeType: str | None
    size: int | None
    error: str | None
    requestId: str


class EditorTarget(Wire):
    id: str
    label: str


class Editors(Wire):
    requestId: str
    editors: list[EditorTarget]
    error: str | None


class OpenInEditor(Wire):
    requestId: str
    error: str | None


class SuggestionEntry(Wire):
    path: str
    kind: Literal["file", "directory"]


class DirectorySuggestions(Wire):
    directories: list[str]
    entries: list[SuggestionEntry]
    error: str | None
    requestId: str


class CreateWorktree(Wire):
    workspace: Descriptor | None
    error: str | None
    errorCode: str | None = None
    setupTerminalId: str | None
    requestId: str


class SetupSnapshot(Wire):
    status: Literal["running", "completed", "failed"]
    detail: WorktreeSetupDetail
    error: str | None


class SetupStatus(Wire):
    requestId: str
    workspaceId: str
    snapshot: SetupSnapshot | None


class SetupProgress(Wire):
    workspaceId: str
    status: Literal["running", "completed", "failed"]
    detail: WorktreeSetupDetail
    error: str | None


class StartScript(Wire):
    requestId: str
    workspaceId: str
    scriptName: str
    terminalId: str | None
    error: str | None


FILES_OUTBOUND: dict[str, type[Wire]] = {
    "file_explorer_response": FileExplorer,
    "project_icon_response": ProjectIcon,
    "file_download_token_response": DownloadToken,
    "list_available_editors_response": Editors,
    "open_in_editor_response": OpenInEditor,
    "directory_suggestions_response": DirectorySuggestions,
    "create_paseo_worktree_response": CreateWorktree,
    "workspace_setup_status_response": SetupStatus,
    "workspace_setup_progress": SetupProgress,
    "start_workspace_script_response": StartScript,
}
