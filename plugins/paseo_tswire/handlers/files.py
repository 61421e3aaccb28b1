"""Files and editors: ``file_explorer_request`` (a listing, or a file as JSON or as the
file-transfer binary frames), ``file_download_token_request``, ``project_icon_request``,
``list_available_editors_request`` and ``open_in_editor_request``.

Everything goes through the session's ``fs.*``, ``project.*`` and ``editor.*`` methods, so
what a client may read is what the daemon lets that session read (a workspace's files, never
outside it). Failures answer the request's own response with its ``error`` (the app shows it
in the panel), as the TypeScript daemon does.

A file asked for with ``acceptBinary`` is sent as three binary frames, the TypeScript
``binary-frames/file-transfer.ts`` layout: ``[opcode, len(requestId), requestId, body]`` with
FileBegin ``0x10`` (body: a big-endian u16 length and the JSON metadata ``{mime, size,
encoding, modifiedAt}``), FileChunk ``0x11`` (body: the bytes) and FileEnd ``0x12`` (empty).
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

from paseo_tswire.connection import ClientSession
from paseo_tswire.models import files as fm
from paseo_tswire.port import Failure

FILE_BEGIN, FILE_CHUNK, FILE_END = 0x10, 0x11, 0x12
CHUNK = 256 * 1024
"""Bytes of one FileChunk frame (the TypeScript daemon sends one; smaller frames keep every
frame far below a client's limit)."""


def transfer_frames(request_id: str, read: dict[str, Any], data: bytes) -> list[bytes]:
    """The FileBegin, FileChunk… and FileEnd frames of one file (see the module docstring)."""
    rid = request_id.encode()
    if not 0 < len(rid) <= 0xFF:
        raise ValueError("a file transfer's requestId must be 1 to 255 bytes")
    head = bytes([len(rid)]) + rid
    metadata = json.dumps(
        {
            "mime": read["mimeType"],
            "size": read["size"],
            "encoding": "utf-8" if read["kind"] == "text" else "binary",
            "modifiedAt": read["modifiedAt"],
        },
        separators=(",", ":"),
    ).encode()
    frames = [bytes([FILE_BEGIN]) + head + struct.pack(">H", len(metadata)) + metadata]
    frames += [
        bytes([FILE_CHUNK]) + head + data[i : i + CHUNK] for i in range(0, len(data), CHUNK)
    ] or [bytes([FILE_CHUNK]) + head]
    frames.append(bytes([FILE_END]) + head)
    return frames


def _file(read: dict[str, Any], data: bytes) -> fm.ExplorerFile:
    kind = read["kind"]
    base = {
        "path": read["path"],
        "kind": kind,
        "mimeType": read["mimeType"],
        "size": read["size"],
        "modifiedAt": read["modifiedAt"],
    }
    if kind == "image":
        return fm.ExplorerFile(encoding="base64", content=read["data"], **base)
    if kind == "binary":
        return fm.ExplorerFile(encoding="none", **base)
    return fm.ExplorerFile(encoding="utf-8", content=data.decode("utf-8", "replace"), **base)


async def file_explorer(session: ClientSession, msg: fm.FileExplorerRequest) -> None:
    path = msg.path if msg.path is not None else "."

    def reply(**fields: Any) -> fm.FileExplorer:
        return fm.FileExplorer(
            **{
                "cwd": msg.cwd.strip() or msg.cwd,
                "path": path,
                "mode": msg.mode,
                "directory": None,
                "file": None,
                "error": None,
                "requestId": msg.requestId,
                **fields,
            }
        )

    if not msg.cwd.strip():
        await session.push("file_explorer_response", reply(error="cwd is required"))
        return
    try:
        if msg.mode == "list":
            listed = await session.call("fs.list", {"cwd": msg.cwd, "path": path})
            directory = fm.ExplorerDirectory(
                path=listed["path"], entries=[fm.ExplorerEntry(**e) for e in listed["entries"]]
            )
            answer = reply(cwd=listed["cwd"], path=listed["path"], directory=directory)
        else:
            read = await session.call("fs.read", {"cwd": msg.cwd, "path": path})
            data = base64.b64decode(read["data"])
            if msg.acceptBinary:
                for frame in transfer_frames(msg.requestId, read, data):
                    await session.raw(frame)
                return
            answer = reply(cwd=read["cwd"], path=read["path"], file=_file(read, data))
    except Failure as exc:
        answer = reply(error=exc.message)
    await session.push("file_explorer_response", answer)


async def download_token(session: ClientSession, msg: fm.DownloadTokenRequest) -> None:
    if not msg.cwd.strip():
        error: str | None = "cwd is required"
        found: dict[str, Any] = {}
    else:
        try:
            found = await session.call("fs.downloadToken", {"cwd": msg.cwd, "path": msg.path})
            error = None
        except Failure as exc:
            found, error = {}, exc.message
    await session.push(
        "file_download_token_response",
        fm.DownloadToken(
            cwd=found.get("cwd", msg.cwd),
            path=found.get("path", msg.path),
            token=found.get("token"),
            fileName=found.get("fileName"),
            mimeType=found.get("mimeType"),
            size=found.get("size"),
            error=error,
            requestId=msg.requestId,
        ),
    )


async def _project_of(session: ClientSession, cwd: str) -> str | None:
    """The project whose root is, or holds, ``cwd`` (the deepest), else the workspace's."""
    want = cwd.rstrip("/") or "/"
    workspaces = (await session.call("workspace.list", {})).get("workspaces") or []
    for workspace in workspaces:
        if workspace.get("cwd") == want:
            return str(workspace["projectId"])
    projects = (await session.call("project.list", {})).get("projects") or []
    holding = [
        p
        for p in projects
        if want == p["rootPath"] or want.startswith(p["rootPath"].rstrip("/") + "/")
    ]
    return str(max(holding, key=lambda p: len(p["rootPath"]))["projectId"]) if holding else None


async def project_icon(session: ClientSession, msg: fm.CwdRequest) -> None:
    icon: fm.Icon | None = None
    error: str | None = None
    try:
        project_id = await _project_of(session, msg.cwd)
        if project_id is not None:
            found = await session.call("project.icon", {"projectId": project_id})
            if found.get("data") and found.get("mimeType"):
                icon = fm.Icon(data=found["data"], mimeType=found["mimeType"])
    except Failure as exc:
        error = exc.message
    await session.push(
        "project_icon_response",
        fm.ProjectIcon(cwd=msg.cwd, icon=icon, error=error, requestId=msg.requestId),
    )


async def list_editors(session: ClientSession, msg: fm.EditorsRequest) -> None:
    try:
        found = (await session.call("editor.list", {})).get("editors") or []
        reply = fm.Editors(
            requestId=msg.requestId, editors=[fm.EditorTarget(**e) for e in found], error=None
        )
    except Failure as exc:
        reply = fm.Editors(requestId=msg.requestId, editors=[], error=exc.message)
    await session.push("list_available_editors_response", reply)


async def open_in_editor(session: ClientSession, msg: fm.OpenInEditorRequest) -> None:
    error: str | None = None
    try:
        await session.call("editor.open", {"editorId": msg.editorId.strip(), "path": msg.path})
    except Failure as exc:
        error = exc.message
    await session.push(
        "open_in_editor_response", fm.OpenInEditor(requestId=msg.requestId, error=error)
    )


TABLE: dict[str, tuple[type[Any], Any]] = {
    "file_explorer_request": (fm.FileExplorerRequest, file_explorer),
    "file_download_token_request": (fm.DownloadTokenRequest, download_token),
    "project_icon_request": (fm.CwdRequest, project_icon),
    "list_available_editors_request": (fm.EditorsRequest, list_editors),
    "open_in_editor_request": (fm.OpenInEditorRequest, open_in_editor),
}
"""This module's part of :data:`paseo_tswire.dispatch.TABLE`."""
