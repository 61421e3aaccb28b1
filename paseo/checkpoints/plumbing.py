"""The git side of checkpoints: working-tree snapshots through a temporary index, hidden refs,
tree-to-tree changes, and restoring chosen paths without touching the user's index.

Every command is an argv through the daemon's :class:`~paseo.git.runner.GitRunner` (so through
its process limiter), never a shell string. What is written to the user's repository is only
objects and refs under :data:`REF_ROOT`: ``GIT_INDEX_FILE`` points every index-using command at
a file of ours, commits are made with ``commit-tree`` (no branch, no ``HEAD``, no hooks) and the
identity is given in the environment, so the user's config is neither needed nor changed.

Cheapness: a snapshot copies the agent's cached index (kept under ``$PASEO_HOME`` from its last
snapshot, with the stat data git needs) to a temporary path and runs ``git add -A`` into it, so
only files whose stat data changed are hashed, as ``git status`` would; the first snapshot of
an agent seeds the temporary index from the previous checkpoint's tree (``git read-tree``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paseo.git.runner import GitCommandFailed, GitResult, GitRunner

REF_ROOT = "refs/paseo/checkpoints"
"""Every checkpoint ref lives below ``REF_ROOT/<agentId>/``."""

IDENTITY = {
    "GIT_AUTHOR_NAME": "Paseo",
    "GIT_AUTHOR_EMAIL": "paseo@localhost",
    "GIT_COMMITTER_NAME": "Paseo",
    "GIT_COMMITTER_EMAIL": "paseo@localhost",
}
"""Checkpoint commits carry this identity, so a repository without ``user.name`` works and the
user's identity is never borrowed."""

GITLINK = "160000"
"""The mode of a submodule entry: its content is another repository's, never restored here."""

_FIELD = "\x1f"
_RECORD = "\x1e"


@dataclass(frozen=True)
class Entry:
    """One blob (or link) of a tree: its mode and object id."""

    mode: str
    oid: str


@dataclass(frozen=True)
class Change:
    """A path that differs between two trees (``None``: absent on that side)."""

    path: str
    old: Entry | None
    new: Entry | None


@dataclass(frozen=True)
class RefInfo:
    """A hidden ref: its name, commit, tree, first parent (or ``None``) and JSON body."""

    name: str
    commit: str
    tree: str
    parent: str | None
    body: dict[str, Any]


def _entry(mode: str, oid: str) -> Entry | None:
    return None if mode == "000000" else Entry(mode, oid)


def parse_raw(output: str) -> list[Change]:
    """``git diff-tree -r -z --raw`` output as changes (``:old new oldoid newoid S\\0path\\0``)."""
    parts = output.split("\0")
    changes = []
    for index in range(0, len(parts) - 1, 2):
        header, path = parts[index], parts[index + 1]
        if not header.startswith(":"):
            continue
        old_mode, new_mode, old_oid, new_oid, _status = header[1:].split(" ", 4)
        changes.append(Change(path, _entry(old_mode, old_oid), _entry(new_mode, new_oid)))
    return changes


def _copy_cache(cache: Path, temporary: Path) -> bool:
    """Copy the cached index to ``temporary``; ``False`` when there is none yet."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copyfile(cache, temporary)
    except FileNotFoundError:
        return False
    return True


def _discard(*paths: Path) -> bool:
    """Remove ``paths``; whether any existed."""
    found = False
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            found = True
    return found


def _may_be_in_work_tree(cwd: Path) -> bool:
    """Whether git could find a working tree at ``cwd``: a ``.git`` there or in a parent, as
    git's own discovery looks (or a ``GIT_DIR``/``GIT_WORK_TREE`` in the daemon's environment,
    which git would follow instead).

    Checked before asking git, because an agent outside any repository would otherwise cost a
    ``git rev-parse`` at every turn: a fork of the daemon and a program start, on the machine
    the agent program is using (about 7 ms of every turn's end to end on a 2-core machine,
    ``bench/agents_real.py``). A few ``stat`` calls answer the common no.
    """
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return cwd.is_dir()
    if not cwd.is_dir():
        return False
    return any((folder / ".git").exists() for folder in (cwd, *cwd.parents))


class Repo:
    """One working tree (its top level), driven through ``runner``."""

    def __init__(self, runner: GitRunner, toplevel: Path) -> None:
        self.runner = runner
        self.toplevel = toplevel

    @classmethod
    async def find(cls, runner: GitRunner, cwd: Path) -> Repo | None:
        """The working tree ``cwd`` is inside, or ``None`` (not in one, bare, or no git)."""
        if not await asyncio.to_thread(_may_be_in_work_tree, cwd):
            return None
        try:
            result = await runner.run(
                ["rev-parse", "--is-inside-work-tree", "--show-toplevel"], cwd=cwd, check=False
            )
        except GitCommandFailed:
            return None
        lines = result.stdout.splitlines()
        if not result.ok or len(lines) < 2 or lines[0].strip() != "true":
            return None
        return cls(runner, Path(lines[1].strip()))

    async def git(
        self,
        args: Sequence[str],
        *,
        index: Path | None = None,
        check: bool = True,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> GitResult:
        """``git args`` at the top level; with ``index``, on that index file instead of the
        user's."""
        extra = {**IDENTITY, **(env or {})}
        if index is not None:
            extra["GIT_INDEX_FILE"] = str(index)
        return await self.runner.run(
            list(args), cwd=self.toplevel, env=extra, check=check, stdin=stdin
        )

    # ------------------------------------------------------------------ snapshots

    async def snapshot(self, cache: Path, seed_tree: str | None) -> str:
        """The working tree now (tracked and untracked files, ``.gitignore`` respected) as a
        tree id. ``cache`` is the agent's index of its last snapshot: copied to a temporary
        path, updated there, and put back atomically."""
        try:
            return await self._snapshot(cache, seed_tree)
        except GitCommandFailed:
            if not await asyncio.to_thread(_discard, cache):
                raise
            # A damaged or foreign cache costs one full hash, never a missing checkpoint.
            return await self._snapshot(cache, seed_tree)

    async def _snapshot(self, cache: Path, seed_tree: str | None) -> str:
        temporary = cache.with_name(f"{cache.name}.{uuid.uuid4().hex}.tmp")
        try:
            if not await asyncio.to_thread(_copy_cache, cache, temporary) and seed_tree:
                await self.git(["read-tree", seed_tree], index=temporary)
            # --ignore-errors: an unreadable file is left out rather than losing the snapshot.
            await self.git(["add", "-A", "--ignore-errors"], index=temporary, check=False)
            tree = (await self.git(["write-tree"], index=temporary)).stdout.strip()
            os.replace(temporary, cache)
            return tree
        finally:
            await asyncio.to_thread(_discard, temporary, Path(f"{temporary}.lock"))

    async def commit(self, tree: str, parent: str | None, message: str) -> str:
        """A commit of ``tree`` (no branch moves; unsigned whatever the user's config says)."""
        args = ["commit-tree", "--no-gpg-sign", tree]
        if parent is not None:
            args += ["-p", parent]
        return (await self.git([*args, "-m", message])).stdout.strip()

    # ------------------------------------------------------------------ refs

    async def set_ref(self, name: str, commit: str) -> None:
        await self.git(["update-ref", name, commit])

    async def delete_refs(self, names: Iterable[str]) -> None:
        """Delete every ref of ``names`` in one transaction (no process when there are none)."""
        lines = "".join(f"delete {name}\n" for name in names)
        if lines:
            await self.git(["update-ref", "--stdin"], stdin=lines.encode())

    async def refs(self, prefix: str) -> list[RefInfo]:
        """Every ref below ``prefix`` with its commit's tree, first parent and JSON body."""
        fmt = _FIELD.join(
            ["%(refname)", "%(objectname)", "%(tree)", "%(parent)", "%(contents:body)"]
        )
        result = await self.git(
            ["for-each-ref", f"--format={fmt}{_RECORD}", prefix.rstrip("/") + "/"]
        )
        found = []
        for record in result.stdout.split(_RECORD):
            fields = record.strip("\n").split(_FIELD)
            if len(fields) != 5:
                continue
            name, commit, tree, parents, body = fields
            try:
                data = json.loads(body.strip() or "{}")
            except ValueError:
                data = {}
            parent = parents.split()[0] if parents.strip() else None
            body_data = data if isinstance(data, dict) else {}
            found.append(RefInfo(name, commit, tree, parent, body_data))
        return found

    # ------------------------------------------------------------------ trees

    async def changes(self, old: str, new: str) -> list[Change]:
        """The paths that differ between trees ``old`` and ``new`` (no rename detection)."""
        result = await self.git(["diff-tree", "-r", "-z", "--raw", "--no-renames", old, new])
        return parse_raw(result.stdout)

    async def patch(self, old: str, new: str) -> str:
        """The unified diff from tree ``old`` to tree ``new``."""
        result = await self.git(["diff-tree", "-p", "--no-renames", "--no-color", old, new])
        return result.stdout

    async def restore(self, tree: str, changes: Sequence[Change]) -> None:
        """Make each path of ``changes`` in the working tree what its ``new`` side says:
        written from ``tree`` (which holds that side) through a temporary index, or removed."""
        write = [c.path for c in changes if c.new is not None and c.new.mode != GITLINK]
        remove = [c.path for c in changes if c.new is None]
        if write:
            with tempfile.TemporaryDirectory(prefix="paseo-undo-") as scratch:
                index = Path(scratch) / "index"
                await self.git(["read-tree", tree], index=index)
                paths = b"".join(path.encode() + b"\0" for path in write)
                await self.git(["checkout-index", "-f", "-z", "--stdin"], index=index, stdin=paths)
        for path in remove:
            self._remove(path)

    def _remove(self, path: str) -> None:
        """Remove one file the restore says is absent, and the directories that leaves empty
        (never the top level, never a directory that still holds something)."""
        target = self.toplevel / path
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        parent = target.parent
        while parent != self.toplevel and self.toplevel in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent
