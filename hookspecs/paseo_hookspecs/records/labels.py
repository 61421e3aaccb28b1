"""The host-local workspace label catalog and its recoverable compound commit.

``projects/workspace-labels.json`` is a JSON array of ``{name, color}`` definitions shared by every
workspace on the host. Workspaces store label *names*, so renames and deletes rewrite the catalog
and the workspace registry together; ``projects/workspace-labels.transaction.json`` holds the
before and after images of such a commit until it is durable (``phase`` becomes ``committed``) or
rolled back on recovery.

A label's identity is its name trimmed, with internal whitespace collapsed, compared without case
(:func:`label_identity`); identities are unique within one catalog.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar, Literal, get_args

from pydantic import RootModel

from paseo_hookspecs.records._base import ROOT_CONFIG, RecordModel

__all__ = [
    "RESERVED_WORKSPACE_LABEL_PREFIX",
    "WORKSPACE_LABEL_COLORS",
    "WorkspaceLabelColor",
    "WorkspaceLabelDefinition",
    "WorkspaceLabelTransaction",
    "WorkspaceLabelTransactionPhase",
    "WorkspaceLabelWorkspaceState",
    "WorkspaceLabelsFile",
    "duplicate_label_identities",
    "is_reserved_label_name",
    "label_identity",
    "normalize_label_name",
]

WorkspaceLabelColor = Literal[
    "violet", "sky", "emerald", "orange", "pink", "indigo", "teal", "red", "amber", "blue"
]
"""One of the ten identity colours a label can take."""

WORKSPACE_LABEL_COLORS: tuple[WorkspaceLabelColor, ...] = get_args(WorkspaceLabelColor)
"""The ten identity colours, in their canonical (picker) order."""

RESERVED_WORKSPACE_LABEL_PREFIX = "paseo:reserved:"
"""Labels whose identity starts with this prefix are data-plane metadata, never user-facing
catalog entries."""

WorkspaceLabelTransactionPhase = Literal["prepared", "committed"]

# The whitespace of JavaScript's ``\s`` and ``String.prototype.trim`` (WhiteSpace plus
# LineTerminator), so names normalize exactly as the TypeScript daemon normalizes them. Python's
# own ``\s`` differs (it also matches U+001C..U+001F and U+0085, and misses U+FEFF).
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WHITESPACE_RUN = re.compile(f"[{re.escape(_JS_WHITESPACE)}]+")


def normalize_label_name(name: str) -> str:
    """``name`` as stored and displayed: trimmed, each internal whitespace run one space."""
    return _WHITESPACE_RUN.sub(" ", name).strip(_JS_WHITESPACE)


def label_identity(name: str) -> str:
    """The uniqueness key of a label name: normalized, then case-folded.

    Two names with the same identity are the same label; a catalog holds each identity once.
    """
    return normalize_label_name(name).casefold()


def is_reserved_label_name(name: str) -> bool:
    """Whether ``name`` is a reserved (``paseo:reserved:``) label rather than a catalog label."""
    return label_identity(name).startswith(RESERVED_WORKSPACE_LABEL_PREFIX)


def duplicate_label_identities(names: Iterable[str]) -> list[str]:
    """The identities that occur more than once among ``names``, in first-repeat order."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for name in names:
        identity = label_identity(name)
        if identity in seen:
            repeated[identity] = None
        seen.add(identity)
    return list(repeated)


class WorkspaceLabelDefinition(RecordModel):
    """One catalog entry: a display name and an identity colour."""

    name: str
    color: WorkspaceLabelColor


class WorkspaceLabelsFile(RootModel[list[WorkspaceLabelDefinition]]):
    """The whole ``projects/workspace-labels.json`` catalog, in display order.

    Reading does not enforce identity uniqueness (a damaged catalog must stay readable); writers
    check with :func:`duplicate_label_identities`.
    """

    model_config = ROOT_CONFIG


class WorkspaceLabelWorkspaceState(RecordModel):
    """The label-relevant slice of one workspace inside a label transaction image."""

    NOT_NULL: ClassVar[frozenset[str]] = frozenset({"labels"})

    workspaceId: str
    labels: list[str] | None = None
    updatedAt: str


class WorkspaceLabelTransaction(RecordModel):
    """A catalog-plus-assignments compound commit (``workspace-labels.transaction.json``).

    ``prepared`` transactions are rolled back on recovery; a ``committed`` marker proves both data
    files were written and is only cleaned up, never replayed.
    """

    phase: WorkspaceLabelTransactionPhase
    beforeLabels: list[WorkspaceLabelDefinition]
    afterLabels: list[WorkspaceLabelDefinition]
    beforeWorkspaces: list[WorkspaceLabelWorkspaceState]
    afterWorkspaces: list[WorkspaceLabelWorkspaceState]
