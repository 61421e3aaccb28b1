"""Refusing archives whose entries would land outside the directory they are unpacked into.

The checks read archive headers only; nothing is extracted. A package manager that unpacks the
archive afterwards (npm, pip) has its own checks, but a refusal here comes before any file is
written and names the offending entry.
"""

from __future__ import annotations

import posixpath
import tarfile
import zipfile
from pathlib import Path

from paseo_hookspecs.errors import InvalidParams


def unsafe_member_reason(name: str) -> str | None:
    """Why an archive member called ``name`` would escape its directory, or ``None``."""
    if not name or "\x00" in name:
        return "empty or NUL in name"
    # Archives written on Windows may use backslashes; treat them as separators too so
    # "..\\evil" cannot slip past a POSIX-only check.
    unified = name.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        return "absolute path"
    if ".." in unified.split("/"):
        return "parent directory reference"
    return None


def _link_escapes(member_name: str, link: str) -> bool:
    unified = link.replace("\\", "/")
    if unified.startswith("/"):
        return True
    base = posixpath.dirname(member_name.replace("\\", "/"))
    resolved = posixpath.normpath(posixpath.join(base, unified))
    return resolved == ".." or resolved.startswith("../")


def check_tarball(path: Path) -> None:
    """Raise :class:`InvalidParams` when any entry of the tarball at ``path`` would escape.

    Refused: absolute names, ``..`` components, links pointing outside the archive, and device
    or FIFO entries (a package has no business creating those).
    """
    try:
        with tarfile.open(path, mode="r:*") as archive:
            for member in archive:
                reason = unsafe_member_reason(member.name)
                is_link = member.issym() or member.islnk()
                # A hard link's target is relative to the archive root, a symlink's to its own
                # directory.
                base = member.name if member.issym() else ""
                if reason is None and is_link and _link_escapes(base, member.linkname):
                    reason = f"link to {member.linkname!r} points outside the package"
                if reason is None and (member.isdev() or member.isfifo()):
                    reason = "device or FIFO entry"
                if reason is not None:
                    raise InvalidParams(f"refusing {path.name}: entry {member.name!r} ({reason})")
    except (tarfile.TarError, OSError) as exc:
        raise InvalidParams(f"cannot read tarball {path}: {exc}") from exc


def check_wheel(path: Path) -> None:
    """Raise :class:`InvalidParams` when any entry of the wheel (zip) at ``path`` would escape."""
    try:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                reason = unsafe_member_reason(name)
                if reason is not None:
                    raise InvalidParams(f"refusing {path.name}: entry {name!r} ({reason})")
    except (zipfile.BadZipFile, OSError) as exc:
        raise InvalidParams(f"cannot read wheel {path}: {exc}") from exc
