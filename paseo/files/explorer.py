"""Listing a workspace directory and reading one of its files, the TypeScript daemon's way.

A listing holds the directory's files and subdirectories (newest first, then by name), each
with its size and modification time; an entry that is a link out of the workspace, or a
dangling one, is left out (a listing must not tell what lies outside). A file is classified
as the TypeScript daemon does: an image by its extension, else binary when its bytes look
binary (a NUL, or more than 30 % control bytes), else text. Reads are bounded:
:data:`MAX_READ_BYTES` at most, a larger file is refused with its size (download it instead).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime

from paseo_hookspecs.errors import InvalidParams, NotFound

from paseo.files.scoped import OUTSIDE, inside, relative_to, resolve

MAX_READ_BYTES = 5 * 1024 * 1024
"""The largest file read for a client (5 MiB): its answer stays below one session frame."""

MAX_ENTRIES = 5000
"""Entries listed of one directory (the rest are left out)."""

SNIFF_BYTES = 8192
"""Bytes read to classify a file for a download."""

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".svg": "image/svg+xml",
}
TEXT_TYPES = {".json": "application/json"}


@dataclass(frozen=True)
class Entry:
    name: str
    path: str
    kind: str
    size: int
    modifiedAt: str


@dataclass(frozen=True)
class FileRead:
    path: str
    kind: str
    """``text``, ``image`` or ``binary``."""
    mimeType: str
    size: int
    modifiedAt: str
    data: bytes


@dataclass(frozen=True)
class Downloadable:
    path: str
    absolutePath: str
    fileName: str
    mimeType: str
    size: int


def _iso(mtime: float) -> str:
    return (
        datetime.fromtimestamp(mtime, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def looks_binary(data: bytes) -> bool:
    """The TypeScript daemon's test: a NUL byte, or over 30 % control bytes."""
    if not data:
        return False
    if b"\x00" in data:
        return True
    suspicious = sum(1 for b in data if (b < 32 and b not in (9, 10, 13)) or b == 127)
    return suspicious / len(data) > 0.3


def text_type(ext: str) -> str:
    return TEXT_TYPES.get(ext, "text/plain")


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError as exc:
        raise NotFound(f"{path} does not exist", data={"path": path}) from exc


def list_directory(root: str, relative: str | None) -> tuple[str, list[Entry]]:
    """``(path relative to root, entries)`` of a directory inside ``root``. Blocking."""
    directory = resolve(root, relative)
    if not stat.S_ISDIR(_stat(directory).st_mode):
        raise InvalidParams("Requested path is not a directory", data={"path": relative})
    real_root = os.path.realpath(root)
    entries: list[Entry] = []
    with os.scandir(directory) as listing:
        for item in listing:
            if len(entries) >= MAX_ENTRIES:
                break
            target = os.path.join(directory, item.name)
            try:
                if item.is_symlink() and not inside(real_root, os.path.realpath(target)):
                    continue
                info = os.stat(target)
            except OSError:  # dangling or looping link, or gone meanwhile
                continue
            kind = "directory" if stat.S_ISDIR(info.st_mode) else "file"
            entries.append(
                Entry(item.name, relative_to(root, target), kind, info.st_size, _iso(info.st_mtime))
            )
    entries.sort(key=lambda e: e.name)
    entries.sort(key=lambda e: e.modifiedAt, reverse=True)
    return relative_to(root, directory), entries


def _regular(root: str, relative: str) -> tuple[str, os.stat_result]:
    path = resolve(root, relative)
    info = _stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise InvalidParams("Requested path is not a file", data={"path": relative})
    return path, info


def read_file(root: str, relative: str, *, limit: int = MAX_READ_BYTES) -> FileRead:
    """A file inside ``root``, classified and read (at most ``limit`` bytes). Blocking."""
    path, info = _regular(root, relative)
    if info.st_size > limit:
        raise InvalidParams(
            f"{relative} is {info.st_size} bytes, more than the {limit} a client may read at "
            "once: download it instead",
            data={"path": relative, "size": info.st_size, "limit": limit},
        )
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew since the stat
        raise InvalidParams(f"{relative} is larger than {limit} bytes", data={"path": relative})
    ext = os.path.splitext(path)[1].lower()
    base = (relative_to(root, path), len(data), _iso(info.st_mtime))
    if ext in IMAGE_TYPES:
        return FileRead(base[0], "image", IMAGE_TYPES[ext], base[1], base[2], data)
    if looks_binary(data):
        return FileRead(base[0], "binary", "application/octet-stream", base[1], base[2], data)
    return FileRead(base[0], "text", text_type(ext), base[1], base[2], data)


def downloadable(root: str, relative: str) -> Downloadable:
    """What a download of a file inside ``root`` serves (any size). Blocking."""
    path, info = _regular(root, relative)
    ext = os.path.splitext(path)[1].lower()
    mime = IMAGE_TYPES.get(ext)
    if mime is None:
        with open(path, "rb") as handle:
            mime = (
                "application/octet-stream"
                if looks_binary(handle.read(SNIFF_BYTES))
                else text_type(ext)
            )
    return Downloadable(
        relative_to(root, path), os.path.realpath(path), os.path.basename(path), mime, info.st_size
    )


__all__ = ["OUTSIDE", "Downloadable", "Entry", "FileRead", "list_directory", "read_file"]
