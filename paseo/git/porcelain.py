"""Parsing ``git status --porcelain=v2 --branch -z``: the branch, its upstream and how far it
is ahead and behind, and each changed path with its index and working-tree state.

Pure functions over git's output (unit-tested on captured text); the version-2 format is
git's stable machine format, so the parse does not depend on the user's language or config.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_STATES = {
    "M": "modified",
    "T": "type_changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "U": "conflicted",
}


@dataclass(frozen=True)
class FileChange:
    """One changed path (relative to the checkout root, ``/``-separated)."""

    path: str
    index: str
    """The staged state: ``modified``, ``added``, ``deleted``, ``renamed``, ``copied``,
    ``type_changed``, ``conflicted``, ``untracked`` or ``unchanged``."""
    worktree: str
    """The unstaged state (same words)."""
    orig_path: str | None = None
    """The path it was renamed or copied from."""

    @property
    def state(self) -> str:
        """One word for the path as a whole (a conflict or untracked wins, then the index)."""
        if "conflicted" in (self.index, self.worktree):
            return "conflicted"
        if self.index == "untracked":
            return "untracked"
        return self.index if self.index != "unchanged" else self.worktree

    @property
    def staged(self) -> bool:
        return self.index not in ("unchanged", "untracked", "conflicted")

    @property
    def unstaged(self) -> bool:
        return self.worktree != "unchanged"


@dataclass(frozen=True)
class StatusReport:
    """What ``git status`` said about the checkout."""

    head_oid: str | None
    """``None`` before the first commit."""
    branch: str | None
    """``None`` when HEAD is detached."""
    upstream: str | None
    ahead: int | None
    behind: int | None
    files: list[FileChange] = field(default_factory=list)

    @property
    def dirty(self) -> bool:
        return bool(self.files)

    @property
    def conflicts(self) -> list[str]:
        return [f.path for f in self.files if f.state == "conflicted"]


def _xy(code: str) -> tuple[str, str]:
    if code[0] == "U" or code[1] == "U" or code in ("AA", "DD"):
        return "conflicted", "conflicted"
    return _STATES.get(code[0], "unchanged"), _STATES.get(code[1], "unchanged")


def parse_status(output: str) -> StatusReport:
    """The report in ``git status --porcelain=v2 --branch -z`` output (untracked included)."""
    head_oid: str | None = None
    branch: str | None = None
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    files: list[FileChange] = []
    records = output.split("\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if not record:
            continue
        if record.startswith("# "):
            key, _, value = record[2:].partition(" ")
            if key == "branch.oid":
                head_oid = None if value == "(initial)" else value
            elif key == "branch.head":
                branch = None if value == "(detached)" else value
            elif key == "branch.upstream":
                upstream = value
            elif key == "branch.ab":
                plus, _, minus = value.partition(" ")
                ahead, behind = int(plus.lstrip("+")), int(minus.lstrip("-"))
            continue
        kind = record[0]
        if kind in "12u" and record.count(" ") < {"1": 8, "2": 9, "u": 10}[kind]:
            break  # a record cut short (the output's byte bound)
        if kind == "1":
            parts = record.split(" ", 8)
            index, worktree = _xy(parts[1])
            files.append(FileChange(parts[8], index, worktree))
        elif kind == "2":
            parts = record.split(" ", 9)
            index, worktree = _xy(parts[1])
            orig = records[i] if i < len(records) and records[i] else None
            i += 1
            files.append(FileChange(parts[9], index, worktree, orig_path=orig))
        elif kind == "u":
            parts = record.split(" ", 10)
            files.append(FileChange(parts[10], "conflicted", "conflicted"))
        elif kind == "?":
            files.append(FileChange(record[2:], "untracked", "untracked"))
        # "!" (ignored) is never asked for.
    return StatusReport(head_oid, branch, upstream, ahead, behind, files)
