"""Which directories a caller may open as a project or workspace.

A path must be absolute, exist and be a searchable, readable directory. Nobody may open the
filesystem root or the daemon's own state root (except its worktrees directory, where managed
checkouts live). A remote session (a password-authenticated client on another host) may open
only directories under the daemon user's home directory, already-registered project roots, or
the daemon's worktrees directory: every checkout there was made by the daemon from a registered
project, so it is no wider than the project itself (the app opens a worktree it just made).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from paseo_hookspecs.errors import AccessDenied, InvalidParams

from paseo.git.facts import normalize_path


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both normalized, compared lexically)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_openable(
    raw: str,
    *,
    state_root: str,
    worktrees_root: str,
    session_kind: str = "local",
    project_roots: Iterable[str] = (),
) -> str:
    """The normalized directory ``raw`` names, or an error that says why it cannot be opened.

    Reads the filesystem (blocking: call it in a worker thread)."""
    if not raw or not os.path.isabs(os.path.expanduser(raw)):
        raise InvalidParams(f"the path must be absolute: {raw!r}", data={"path": raw})
    path = normalize_path(raw)
    if not os.path.exists(path):
        raise InvalidParams(f"{path} does not exist", data={"path": path})
    if not os.path.isdir(path):
        raise InvalidParams(f"{path} is not a directory", data={"path": path})
    if not os.access(path, os.R_OK | os.X_OK):
        raise AccessDenied(f"{path} is not readable by the daemon", data={"path": path})
    if os.path.dirname(path) == path:
        raise AccessDenied("the filesystem root cannot be opened", data={"path": path})
    state = normalize_path(state_root)
    if is_within(path, state) and not is_within(path, normalize_path(worktrees_root)):
        raise AccessDenied(f"{path} is inside the daemon's state root", data={"path": path})
    if session_kind != "local":
        allowed = [
            normalize_path(os.path.expanduser("~")),
            normalize_path(worktrees_root),
            *project_roots,
        ]
        if not any(is_within(path, root) for root in allowed):
            raise AccessDenied(
                f"a remote client may not open {path}: it is outside the home directory",
                data={"path": path},
            )
    return path
