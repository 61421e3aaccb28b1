"""``fs.*`` and ``editor.*`` over the wire: a workspace's files, the add-project picker's
suggestions, download tokens, and the editors of this machine."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Literal

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import BaseModel, Field

from paseo.rpc.models import WireModel
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.files.service import FilesService

OWNER = frozenset({"local", "remote"})


class FsPathParams(WireModel):
    cwd: str = Field(description="a workspace directory (or a directory below one)")
    path: str | None = Field(None, description="relative to cwd, or absolute inside it")


class FsFileParams(WireModel):
    cwd: str
    path: str = Field(min_length=1)


class FsEntry(WireModel):
    name: str
    path: str = Field(description="relative to cwd, / separated")
    kind: Literal["file", "directory"]
    size: int
    modifiedAt: str


class FsListResult(WireModel):
    cwd: str
    path: str
    entries: list[FsEntry]


class FsReadResult(WireModel):
    cwd: str
    path: str
    kind: Literal["text", "image", "binary"]
    mimeType: str
    size: int
    modifiedAt: str
    data: str = Field(description="the bytes, base64")


class FsTokenResult(WireModel):
    cwd: str
    path: str
    token: str
    fileName: str
    mimeType: str
    size: int
    expiresIn: float = Field(description="seconds the token stays valid (it is single-use)")
    url: str | None = Field(
        description="GET it (no other credential) on the daemon's TCP address; null when the "
        "daemon listens on none"
    )


class FsSuggestParams(WireModel):
    query: str
    cwd: str | None = Field(None, description="complete inside this workspace instead of $HOME")
    includeFiles: bool = False
    includeDirectories: bool = True
    limit: int | None = Field(None, ge=1, le=100)


class FsSuggestion(WireModel):
    path: str
    kind: Literal["file", "directory"]


class FsSuggestResult(WireModel):
    directories: list[str] = Field(description="absolute directories")
    entries: list[FsSuggestion] = Field(description="relative to cwd when given, else absolute")


class EditorModel(WireModel):
    id: str
    label: str


class EditorListResult(WireModel):
    editors: list[EditorModel]


class EditorOpenParams(WireModel):
    editorId: str = Field(min_length=1)
    path: str = Field(description="an absolute path inside a workspace")


class EditorOpenResult(WireModel):
    editor: EditorModel


class NoParams(WireModel):
    pass


def method_groups(ref: ServiceRef[FilesService]) -> list[RpcMethodGroup]:
    """The ``fs`` and ``editor`` groups, reaching their service through ``ref``."""

    async def fs_list(ctx: RpcContext, params: FsPathParams) -> FsListResult:
        root, relative, entries = await ref.get().list_dir(params.cwd, params.path)
        return FsListResult(
            cwd=root, path=relative, entries=[FsEntry(**e.__dict__) for e in entries]
        )

    async def fs_read(ctx: RpcContext, params: FsFileParams) -> FsReadResult:
        root, file = await ref.get().read(params.cwd, params.path)
        fields: dict[str, Any] = {k: v for k, v in file.__dict__.items() if k != "data"}
        return FsReadResult(cwd=root, data=base64.b64encode(file.data).decode("ascii"), **fields)

    async def fs_token(ctx: RpcContext, params: FsFileParams) -> FsTokenResult:
        service = ref.get()
        root, ticket, url = await service.download_token(params.cwd, params.path)
        return FsTokenResult(
            cwd=root,
            path=ticket.file.path,
            token=ticket.token,
            fileName=ticket.file.fileName,
            mimeType=ticket.file.mimeType,
            size=ticket.file.size,
            expiresIn=service.tokens.ttl,
            url=url,
        )

    async def fs_suggest(ctx: RpcContext, params: FsSuggestParams) -> FsSuggestResult:
        directories, entries = await ref.get().suggest(
            params.query,
            cwd=params.cwd,
            files=params.includeFiles,
            dirs=params.includeDirectories,
            limit=params.limit,
        )
        return FsSuggestResult(
            directories=directories,
            entries=[FsSuggestion(path=e.path, kind=e.kind) for e in entries],
        )

    async def editor_list(ctx: RpcContext, params: NoParams) -> EditorListResult:
        return EditorListResult(
            editors=[EditorModel(id=e.id, label=e.label) for e in ref.get().editors()]
        )

    async def editor_open(ctx: RpcContext, params: EditorOpenParams) -> EditorOpenResult:
        editor = await ref.get().open_in_editor(params.editorId, params.path)
        return EditorOpenResult(editor=EditorModel(id=editor.id, label=editor.label))

    def method(name: str, handler: Any, params: Any, result: Any, summary: str) -> RpcMethod:
        return RpcMethod(name, handler, params, result, summary=summary, access=OWNER)

    return [
        RpcMethodGroup(
            "fs",
            [
                method(
                    "fs.list",
                    fs_list,
                    FsPathParams,
                    FsListResult,
                    "A workspace directory's entries (links out of the workspace left out)",
                ),
                method(
                    "fs.read",
                    fs_read,
                    FsFileParams,
                    FsReadResult,
                    "A workspace file (at most 5 MiB), classified text, image or binary",
                ),
                method(
                    "fs.downloadToken",
                    fs_token,
                    FsFileParams,
                    FsTokenResult,
                    "A single-use token (60 s) for GET /api/files/download?token=…",
                ),
                method(
                    "fs.suggest",
                    fs_suggest,
                    FsSuggestParams,
                    FsSuggestResult,
                    "Directories under $HOME for a picker query, or paths inside a workspace",
                ),
            ],
        ),
        RpcMethodGroup(
            "editor",
            [
                method(
                    "editor.list",
                    editor_list,
                    NoParams,
                    EditorListResult,
                    "The editors found on the daemon's PATH",
                ),
                method(
                    "editor.open",
                    editor_open,
                    EditorOpenParams,
                    EditorOpenResult,
                    "Open a workspace path in one of them (argv, never a shell)",
                ),
            ],
        ),
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """The files service sends no notifications."""
    return {}
