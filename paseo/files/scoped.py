"""Paths inside a workspace, and nowhere else.

A client names a file by a path relative to a workspace directory (or an absolute one inside
it). Both the path as written and the path every symbolic link on the way resolves to must
stay inside the workspace's real directory: a ``..`` that climbs out, or a link that points
out of the tree, is refused, never followed. A path that does not exist yet is checked as
written (there is nothing to follow).
"""

from __future__ import annotations

import os

from paseo_hookspecs.errors import AccessDenied

OUTSIDE = "Access outside of workspace is not allowed"
"""The TypeScript daemon's words for the refusal (the app shows them)."""


def inside(root: str, path: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute and normalized)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve(root: str, relative: str | None) -> str:
    """The absolute path ``relative`` names under ``root``, or :class:`AccessDenied` when it
    (or what its links resolve to) is outside ``root``. Blocking (reads links)."""
    base = os.path.abspath(root)
    wanted = os.path.normpath(os.path.join(base, os.path.expanduser(relative or ".")))
    if not inside(base, wanted):
        raise AccessDenied(OUTSIDE, data={"path": relative})
    real_root = os.path.realpath(base)
    if os.path.lexists(wanted) and not inside(real_root, os.path.realpath(wanted)):
        raise AccessDenied(OUTSIDE, data={"path": relative})
    return wanted


def relative_to(root: str, path: str) -> str:
    """``path`` relative to ``root`` with ``/`` separators; ``.`` for the root itself."""
    rel = os.path.relpath(path, os.path.abspath(root))
    return "." if rel == "." else rel.replace(os.sep, "/")
