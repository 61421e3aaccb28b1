"""Project icons: validated uploads stored under ``projects/icons/``, and automatic icons
discovered in the project directory.

An upload is accepted only when its bytes are an image of a known kind (PNG, JPEG, GIF, WebP or
SVG, recognised by content, never by a name the client sent) of at most :data:`MAX_ICON_BYTES`.
Each upload gets a new random revision and its own file, so a client caching by revision never
shows a stale image; the previous file of the project is deleted.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from paseo_hookspecs.errors import InvalidParams

from paseo.fs import atomic_write_bytes

MAX_ICON_BYTES = 1024 * 1024
"""The largest icon accepted (1 MiB), uploaded or discovered."""

EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/svg+xml": "svg",
    "image/x-icon": "ico",
}

DISCOVERY_CANDIDATES = (
    "favicon.svg",
    "favicon.png",
    "favicon.ico",
    "logo.svg",
    "logo.png",
    "icon.svg",
    "icon.png",
    "public/favicon.svg",
    "public/favicon.png",
    "public/favicon.ico",
    "public/logo.svg",
    "public/logo.png",
    "static/favicon.ico",
    "static/favicon.png",
    "app/favicon.ico",
    "app/icon.png",
    "src/app/favicon.ico",
    "assets/logo.png",
    "assets/logo.svg",
    "assets/icon.png",
    ".github/logo.png",
    "docs/logo.png",
    "docs/logo.svg",
)
"""Relative paths checked, in order, for an automatic icon."""

_SVG_PROLOG = re.compile(
    rb"^(?:\s+|<\?xml[^>]*\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*", re.DOTALL | re.IGNORECASE
)
_SVG_ACTIVE_CONTENT = re.compile(
    rb"<script|javascript:|<foreignObject|\son[a-z]+\s*=", re.IGNORECASE
)


def sniff_image(data: bytes, *, allow_ico: bool = False) -> str | None:
    """The MIME type of ``data`` judged by its content, or ``None`` when it is not an image of
    an accepted kind. SVG with scripts or event handlers is refused: icons are shown by web
    clients, and an icon must not be able to run code there."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    if allow_ico and data.startswith(b"\x00\x00\x01\x00") and len(data) > 6:
        return "image/x-icon"
    head = data.removeprefix(b"\xef\xbb\xbf")
    prolog = _SVG_PROLOG.match(head)
    rest = head[prolog.end() :] if prolog else head
    if rest[:4].lower() == b"<svg" and rest[4:5] in (b" ", b">", b"\n", b"\t", b"\r", b"/"):
        try:
            head.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if _SVG_ACTIVE_CONTENT.search(head):
            return None
        return "image/svg+xml"
    return None


def validate_upload(data: bytes) -> str:
    """The MIME type of an uploaded icon, or :class:`InvalidParams`."""
    if not data:
        raise InvalidParams("the icon is empty")
    if len(data) > MAX_ICON_BYTES:
        raise InvalidParams(
            f"the icon is {len(data)} bytes; the limit is {MAX_ICON_BYTES}",
            data={"size": len(data), "limit": MAX_ICON_BYTES},
        )
    mime = sniff_image(data)
    if mime is None:
        raise InvalidParams("the icon is not a PNG, JPEG, GIF, WebP or SVG image")
    return mime


@dataclass(frozen=True)
class Icon:
    """An icon's bytes and where they came from."""

    source: str
    """``custom`` (uploaded) or ``discovered`` (found in the project directory)."""
    mime_type: str
    data: bytes
    revision: str | None
    path: str | None = None


class IconStore:
    """Custom icon files under ``projects/icons/``: ``<key>.<revision>.<ext>``, where ``key`` is
    a hash of the project id (legacy ids hold ``/`` and ``:``, which cannot name a file)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def key(project_id: str) -> str:
        return hashlib.sha256(project_id.encode("utf-8")).hexdigest()[:24]

    def _files(self, project_id: str) -> list[Path]:
        prefix = self.key(project_id) + "."
        try:
            return [p for p in self.directory.iterdir() if p.name.startswith(prefix)]
        except FileNotFoundError:
            return []

    def save(self, project_id: str, data: bytes, mime: str) -> str:
        """Store ``data`` as the project's icon; returns the new revision. Blocking."""
        revision = secrets.token_hex(8)
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / f"{self.key(project_id)}.{revision}.{EXTENSIONS[mime]}"
        atomic_write_bytes(target, data)
        return revision

    def prune(self, project_id: str, keep_revision: str | None) -> None:
        """Delete the project's icon files other than ``keep_revision``'s. Blocking."""
        for path in self._files(project_id):
            if keep_revision is None or path.name.split(".")[1] != keep_revision:
                path.unlink(missing_ok=True)

    def load(self, project_id: str, revision: str) -> Icon | None:
        """The stored icon of ``revision``, or ``None``. Blocking."""
        for path in self._files(project_id):
            if path.name.split(".")[1] == revision:
                data = path.read_bytes()
                mime = sniff_image(data)
                if mime is not None:
                    return Icon("custom", mime, data, revision, str(path))
        return None


def discover_icon(root: str) -> Icon | None:
    """The first valid image among :data:`DISCOVERY_CANDIDATES` under ``root``. Blocking."""
    for relative in DISCOVERY_CANDIDATES:
        path = os.path.join(root, relative)
        try:
            if os.path.getsize(path) > MAX_ICON_BYTES:
                continue
            with open(path, "rb") as handle:
                data = handle.read(MAX_ICON_BYTES + 1)
        except OSError:
            continue
        mime = sniff_image(data, allow_ico=True)
        if mime is not None:
            return Icon("discovered", mime, data, None, path)
    return None
