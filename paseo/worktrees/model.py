"""What a worktree request names and what creating or archiving one returns."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field
from typing import Literal

from paseo_hookspecs.records import WorkspaceRecord

from paseo.worktrees.lifecycle import CommandResult
from paseo.worktrees.metadata import WorktreeMetadata

Mode = Literal["branch-off", "checkout-branch", "change-request"]

SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
"""A valid worktree directory name."""


@dataclass(frozen=True)
class WorktreeRequest:
    """What to create. ``project_id`` names the project whose repository is used."""

    project_id: str
    mode: Mode = "branch-off"
    branch: str | None = None
    base: str | None = None
    change_request: int | None = None
    remote: str = "origin"
    slug: str | None = None
    relative_cwd: str | None = None
    """Path of the workspace cwd inside the checkout; default: the project root's path inside
    its repository (so a subproject stays a subproject)."""
    title: str | None = None
    run_setup: bool = True
    head_repository: str | None = None
    """For a change request from another repository (a fork): its ``owner/name``. The
    worktree is then ``untrustedSource``: no setup, terminals or services until trusted."""
    prompt: str | None = None
    """What the work is about (an agent's first prompt): a branch-off without ``branch`` gets a
    branch name generated from it (or from ``title``)."""


@dataclass
class CreateOutcome:
    workspace: WorkspaceRecord
    metadata: WorktreeMetadata
    reused: bool
    setup: list[CommandResult] = field(default_factory=list)


@dataclass
class ArchiveOutcome:
    workspace: WorkspaceRecord
    teardown: list[CommandResult] = field(default_factory=list)
    removed_checkout: bool = False
    branch_deleted: bool = False
    still_referenced_by: list[str] = field(default_factory=list)


def short_hash(text: str) -> str:
    """Eight hex digits naming ``text`` (a repository root) in the worktrees directory."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def slug_for(branch: str) -> str:
    """A directory name for ``branch``: runs of other characters become ``-``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", branch).strip("-.")[:100]
    return slug or f"wt-{secrets.token_hex(3)}"
