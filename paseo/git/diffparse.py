"""Parsing git's unified diffs (``git diff --patch``) and ``--numstat -z`` into per-file
changes: hunks of added, removed and context lines, with a per-file status that marks a file
whose diff was left out as ``too_large`` or ``binary`` rather than dropping it silently.

Pure functions over git's output. Paths are read from the ``---``/``+++`` and ``rename``
lines, unquoted as git quotes them (C-style, when a path holds ``"``, ``\\`` or a control
character; the caller passes ``core.quotePath=false`` so other bytes arrive as they are).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


@dataclass
class DiffLine:
    type: str
    """``add``, ``remove``, ``context`` or ``header`` (the ``@@ … @@`` line)."""
    content: str
    """The line without its ``+``/``-``/space marker."""


@dataclass
class DiffHunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[DiffLine] = field(default_factory=list)


@dataclass
class FileDiff:
    path: str
    old_path: str | None = None
    """The path before a rename or copy."""
    is_new: bool = False
    is_deleted: bool = False
    additions: int = 0
    deletions: int = 0
    hunks: list[DiffHunk] = field(default_factory=list)
    status: str = "ok"
    """``ok``; ``too_large``: the hunks were left out (past the size bounds); ``binary``."""


@dataclass(frozen=True)
class NumStat:
    path: str
    old_path: str | None
    additions: int | None
    """``None`` for a binary file."""
    deletions: int | None

    @property
    def binary(self) -> bool:
        return self.additions is None

    @property
    def lines(self) -> int:
        return (self.additions or 0) + (self.deletions or 0)


def unquote(path: str) -> str:
    """A path as git printed it, C-style quotes and octal escapes undone."""
    if len(path) < 2 or not (path.startswith('"') and path.endswith('"')):
        return path
    body = path[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 == len(body):
            out += char.encode()
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in "01234567" and re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
            continue
        out += _ESCAPES.get(nxt, nxt).encode()
        i += 2
    return out.decode("utf-8", "replace")


def _side(line: str, prefix: str) -> str | None:
    """The path of a ``--- a/x`` / ``+++ b/x`` line, ``None`` for ``/dev/null``."""
    raw = line[4:].rstrip("\t")
    if raw == "/dev/null":
        return None
    path = unquote(raw)
    return path[len(prefix) :] if path.startswith(prefix) else path


def _header_paths(header: str) -> tuple[str, str]:
    """Both paths of ``diff --git a/x b/y`` (used when no ``---``/``+++`` line follows: a mode
    change, an empty new file, a pure rename)."""
    rest = header[len("diff --git ") :]
    if rest.startswith('"'):
        end = rest.index('"', 1)
        while rest[end - 1] == "\\":
            end = rest.index('"', end + 1)
        first, second = rest[: end + 1], rest[end + 2 :]
    else:
        # Unquoted and identical on both sides unless renamed; split at " b/".
        split = rest.find(" b/")
        first, second = (rest[:split], rest[split + 1 :]) if split >= 0 else (rest, rest)
    a, b = unquote(first), unquote(second)
    return a.removeprefix("a/"), b.removeprefix("b/")


def parse_patch(text: str) -> list[FileDiff]:
    """Every file section of a unified diff, in order."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    hunk: DiffHunk | None = None
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            old, new = _header_paths(line)
            current = FileDiff(path=new, old_path=old if old != new else None)
            files.append(current)
            hunk = None
            continue
        if current is None:
            continue
        if hunk is None:
            if line.startswith("new file mode"):
                current.is_new = True
            elif line.startswith("deleted file mode"):
                current.is_deleted = True
            elif line.startswith(("rename from ", "copy from ")):
                current.old_path = unquote(line.split(" ", 2)[2])
            elif line.startswith(("rename to ", "copy to ")):
                current.path = unquote(line.split(" ", 2)[2])
            elif line.startswith("--- "):
                old_side = _side(line, "a/")
                if old_side is None:
                    current.is_new = True
            elif line.startswith("+++ "):
                new_side = _side(line, "b/")
                if new_side is None:
                    current.is_deleted = True
                else:
                    current.path = new_side
            elif line.startswith(("Binary files ", "GIT binary patch")):
                current.status = "binary"
        match = _HUNK.match(line)
        if match is not None:
            hunk = DiffHunk(
                int(match[1]),
                int(match[2] if match[2] is not None else 1),
                int(match[3]),
                int(match[4] if match[4] is not None else 1),
                [DiffLine("header", match[0])],
            )
            current.hunks.append(hunk)
            continue
        if hunk is None:
            continue
        if line.startswith("+"):
            hunk.lines.append(DiffLine("add", line[1:]))
            current.additions += 1
        elif line.startswith("-"):
            hunk.lines.append(DiffLine("remove", line[1:]))
            current.deletions += 1
        elif line.startswith(" "):
            hunk.lines.append(DiffLine("context", line[1:]))
        # "\ No newline at end of file" and the final empty line carry no content.
    if current is not None and current.old_path == current.path:
        current.old_path = None
    return files


def parse_numstat(output: str) -> list[NumStat]:
    """``git diff --numstat -z`` records: ``add\\tdel\\tpath`` or, for a rename or copy,
    ``add\\tdel\\t`` followed by the old and the new path as separate records."""
    stats: list[NumStat] = []
    records = output.split("\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if not record:
            continue
        fields = record.split("\t", 2)
        if len(fields) != 3:
            break  # a record cut short (the output's byte bound)
        added, deleted, path = fields
        old: str | None = None
        if not path:
            if i + 2 > len(records) or not records[i + 1]:
                break
            old = records[i]
            path = records[i + 1]
            i += 2
        stats.append(
            NumStat(
                path=path,
                old_path=old,
                additions=None if added == "-" else int(added),
                deletions=None if deleted == "-" else int(deleted),
            )
        )
    return stats


def text_file_diff(path: str, data: bytes, *, max_lines: int) -> FileDiff:
    """An untracked file as an all-added diff (git has no patch for it), ``binary`` when it
    holds a NUL byte in its first 8 KiB (git's own test), ``too_large`` past ``max_lines``."""
    change = FileDiff(path=path, is_new=True)
    if b"\0" in data[:8000]:
        change.status = "binary"
        return change
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    change.additions = len(lines)
    if len(lines) > max_lines:
        change.status = "too_large"
        return change
    if lines:
        header = f"@@ -0,0 +1,{len(lines)} @@"
        hunk = DiffHunk(0, 0, 1, len(lines), [DiffLine("header", header)])
        hunk.lines.extend(DiffLine("add", text) for text in lines)
        change.hunks.append(hunk)
    return change
