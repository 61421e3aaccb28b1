"""The add-project picker's directory suggestions and a workspace's path completions, ported
from the TypeScript daemon's ``directory-suggestions.ts``.

Home suggestions search the daemon user's home directory: a query rooted with ``~``, ``./``
or an absolute path inside the home lists the children of its parent directory that contain
its last segment; any other query is a term searched breadth-first across the home tree (at
most :data:`MAX_DEPTH` levels and :data:`MAX_SCANNED` directories). Workspace completions do
the same inside a workspace, for files too, skipping build output (``node_modules``, ``dist``,
…). Hidden names (a leading ``.``) are never suggested, and a link is followed only when it
resolves inside the root searched. Results are ranked: an exact segment match, then a
segment prefix, then a partial match, by segment index, match offset and depth.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from paseo.files.scoped import inside, relative_to

DEFAULT_LIMIT = 30
MAX_LIMIT = 100
MAX_DEPTH = 6
MAX_SCANNED = 5000
IGNORED = frozenset(
    {"node_modules", "dist", "build", "target", "out", "coverage", "vendor", "__pycache__"}
)
_NONE = 1 << 62


@dataclass(frozen=True)
class Suggestion:
    path: str
    """Absolute (home suggestions) or relative to the workspace (completions)."""
    kind: str


def limit_of(limit: int | None) -> int:
    return max(1, min(MAX_LIMIT, limit or DEFAULT_LIMIT))


def _real_dir(path: str) -> str | None:
    real = os.path.realpath(path)
    return real if os.path.isdir(real) else None


def _children(directory: str, root: str, *, files: bool, skip_ignored: bool) -> list[Suggestion]:
    found: list[Suggestion] = []
    try:
        listing = list(os.scandir(directory))
    except OSError:
        return found
    for item in listing:
        if item.name.startswith(".") or (skip_ignored and item.name in IGNORED):
            continue
        path = os.path.join(directory, item.name)
        try:
            if item.is_symlink():
                path = os.path.realpath(path)
                if not inside(root, path):
                    continue
            if os.path.isdir(path):
                found.append(Suggestion(path, "directory"))
            elif files and os.path.isfile(path):
                found.append(Suggestion(path, "file"))
        except OSError:
            continue
    return found


def _rank(relative: str, term: str, kind: str) -> tuple[int, int, int, int, int, str]:
    lower = relative.lower()
    depth = 0 if relative == "." else relative.count("/") + 1
    kind_order = 0 if kind == "directory" else 1
    if not term:
        return (3, _NONE, 0, depth, kind_order, relative)
    segments = [] if lower == "." else lower.split("/")
    tier, index = 4, _NONE
    for candidate, test in (
        (0, lambda s: s == term),
        (1, lambda s: s.startswith(term)),
        (2, lambda s: term in s),
    ):
        hit = next((i for i, s in enumerate(segments) if s and test(s)), -1)
        if hit >= 0:
            tier, index = candidate, hit
            break
    else:
        if lower.startswith(term):
            tier = 3
    offset = lower.find(term)
    return (tier, index, offset if offset >= 0 else _NONE, depth, kind_order, relative)


def _search(
    root: str,
    parent: str | None,
    term: str,
    limit: int,
    *,
    files: bool,
    dirs: bool,
    skip_ignored: bool,
) -> list[tuple[tuple[int, int, int, int, int, str], Suggestion]]:
    term = term.lower()
    ranked: dict[tuple[str, str], tuple[tuple[int, int, int, int, int, str], Suggestion]] = {}

    def consider(entry: Suggestion) -> None:
        if (entry.kind == "directory" and not dirs) or (entry.kind == "file" and not files):
            return
        relative = relative_to(root, entry.path)
        name = os.path.basename(entry.path).lower()
        if term and term not in relative.lower() and term not in name:
            return
        key = (entry.kind, entry.path)
        rank = _rank(relative, term, entry.kind)
        if key not in ranked or rank < ranked[key][0]:
            ranked[key] = (rank, entry)

    if parent is not None:
        real = _real_dir(os.path.join(root, parent or "."))
        if real is None or not inside(root, real):
            return []
        for entry in _children(real, root, files=files, skip_ignored=skip_ignored):
            if not term or term in os.path.basename(entry.path).lower():
                consider(entry)
    else:
        queue: list[tuple[str, int]] = [(root, 0)]
        visited = {root}
        scanned = 0
        index = 0
        while index < len(queue) and scanned < MAX_SCANNED:
            directory, depth = queue[index]
            index += 1
            for entry in _children(directory, root, files=files, skip_ignored=skip_ignored):
                scanned += 1
                if entry.kind == "directory" and entry.path not in visited:
                    visited.add(entry.path)
                    if depth < MAX_DEPTH and scanned < MAX_SCANNED:
                        queue.append((entry.path, depth + 1))
                consider(entry)
    return sorted(ranked.values(), key=lambda pair: pair[0])[:limit]


def home_directories(home: str, query: str, limit: int | None = None) -> list[str]:
    """Absolute directories under ``home`` for the picker's ``query``. Blocking."""
    typed = query.strip().replace("\\", "/")
    root = _real_dir(home)
    if not typed or root is None:
        return []
    rooted = False
    text = typed
    if text.startswith("~"):
        rooted, text = True, text[1:].removeprefix("/")
    if os.path.isabs(text):
        rooted = True
        absolute = os.path.normpath(text)
        if not inside(root, absolute):
            return []
        text = relative_to(root, absolute)
        text = "" if text == "." else text
    if text.startswith("./"):
        rooted = True
    while text.startswith("./"):
        text = text[2:]
    while "//" in text:
        text = text.replace("//", "/")
    if not text:
        if typed not in ("~", "~/"):
            return []
        parent: str | None = ""
        term = ""
    elif rooted and "/" in text:
        parent, _, term = text.rpartition("/")
    else:
        parent, term = None, text
    found = _search(root, parent, term, limit_of(limit), files=False, dirs=True, skip_ignored=False)
    return [entry.path for _rank_, entry in found]


def workspace_entries(
    root: str,
    query: str,
    limit: int | None = None,
    *,
    files: bool = False,
    dirs: bool = True,
) -> list[Suggestion]:
    """Paths (relative to ``root``) inside a workspace for ``query``. Blocking."""
    real = _real_dir(root)
    if real is None or not (files or dirs):
        return []
    text = query.strip().replace("\\", "/")
    if os.path.isabs(text):
        absolute = os.path.normpath(text)
        if not inside(real, absolute):
            return []
        text = relative_to(real, absolute)
        text = "" if text == "." else text
    while text.startswith("./"):
        text = text[2:]
    while "//" in text:
        text = text.replace("//", "/")
    if not text:
        parent: str | None = ""
        term = ""
    elif "/" in text:
        parent, _, term = text.rpartition("/")
    else:
        parent, term = None, text
    found = _search(real, parent, term, limit_of(limit), files=files, dirs=dirs, skip_ignored=True)
    return [Suggestion(relative_to(real, entry.path), entry.kind) for _rank_, entry in found]
