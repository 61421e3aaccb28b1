"""File-level steps of creating a checkout: paths inside it, ``FETCH_HEAD``, setup failures.

Blocking helpers: the service runs them in a thread.
"""

from __future__ import annotations

import os
import re

from paseo_hookspecs.errors import InvalidParams

from paseo.git.facts import read_facts
from paseo.git.runner import GitCommandFailed
from paseo.projects.paths import is_within
from paseo.worktrees.lifecycle import (
    CommandResult,
    WorktreeSetupFailed,
    failure_message,
    succeeded,
)

_FETCH_HEAD = re.compile(r"^([0-9a-f]{40})")


def join_path(*parts: str) -> str:
    return os.path.join(*parts)


def make_parent(path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)


def relative_cwd(requested: str | None, project_root: str, toplevel: str) -> str:
    """The workspace cwd's path inside a checkout (default: the project root's own)."""
    if requested is not None:
        relative = os.path.normpath(requested or ".")
    else:
        relative = os.path.relpath(project_root, toplevel)
    if os.path.isabs(relative) or relative == ".." or relative.startswith(".." + os.sep):
        raise InvalidParams(f"relative cwd {relative!r} leaves the checkout")
    return relative


def checked_cwd(checkout: str, relative: str) -> str:
    cwd = os.path.normpath(os.path.join(checkout, relative))
    if not (is_within(cwd, checkout) and os.path.isdir(cwd)):
        raise InvalidParams(
            f"{relative!r} is not a directory in the new checkout", data={"relativeCwd": relative}
        )
    return cwd


def raise_setup_failure(results: list[CommandResult], worktree_id: str) -> None:
    if not succeeded(results):
        raise WorktreeSetupFailed(
            failure_message("setup", results),
            data={"worktreeId": worktree_id, "results": [r.to_json() for r in results]},
        )


def fetch_head_oid(repo_root: str) -> str:
    facts = read_facts(repo_root)
    git_dir = facts.common_dir if facts else os.path.join(repo_root, ".git")
    text = read_file(os.path.join(git_dir, "FETCH_HEAD"))
    match = _FETCH_HEAD.match(text.decode("utf-8", "replace")) if text else None
    if match is None:
        raise GitCommandFailed("git fetch did not record FETCH_HEAD")
    return match[1]


def read_file(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None
