"""Identifier formats of durable records, and their generators.

New identifiers are random and opaque: they are compared by exact equality and never parsed into
paths. Records written before the opaque formats existed keep their old identifiers (remote- or
path-shaped project ids, path-shaped workspace ids), so record models accept any non-empty string
and these patterns only describe what *this* version generates.
"""

from __future__ import annotations

import re
import secrets
import uuid
from typing import Literal

__all__ = [
    "AGENT_ID_PATTERN",
    "PROJECT_ID_PATTERN",
    "SCHEDULE_ID_PATTERN",
    "WORKSPACE_ID_PATTERN",
    "ProjectIdShape",
    "is_opaque_project_id",
    "new_agent_id",
    "new_project_id",
    "new_schedule_id",
    "new_workspace_id",
    "project_id_shape",
]

PROJECT_ID_PATTERN = re.compile(r"^prj_[0-9a-f]{16}$")
"""New project ids: ``prj_`` and 8 random bytes in lowercase hex."""

WORKSPACE_ID_PATTERN = re.compile(r"^wks_[0-9a-f]{16}$")
"""New workspace ids: ``wks_`` and 8 random bytes in lowercase hex."""

SCHEDULE_ID_PATTERN = re.compile(r"^[0-9a-f]{8}$")
"""Schedule ids: 4 random bytes in lowercase hex."""

AGENT_ID_PATTERN = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
"""Agent ids as validated where a record *refers* to an agent: any GUID-shaped string (the
TypeScript schemas use ``z.guid()``, which does not check the version nibble)."""

ProjectIdShape = Literal["opaque", "remote", "path"]


def new_project_id() -> str:
    """A fresh opaque project id, ``prj_<16 hex>``."""
    return f"prj_{secrets.token_hex(8)}"


def new_workspace_id() -> str:
    """A fresh opaque workspace id, ``wks_<16 hex>``."""
    return f"wks_{secrets.token_hex(8)}"


def new_schedule_id() -> str:
    """A fresh schedule id, 8 lowercase hex characters."""
    return secrets.token_hex(4)


def new_agent_id() -> str:
    """A fresh agent id, a random (version 4) UUID in its canonical lowercase form."""
    return str(uuid.uuid4())


def is_opaque_project_id(project_id: str) -> bool:
    """Whether ``project_id`` has the current opaque ``prj_<16 hex>`` form."""
    return PROJECT_ID_PATTERN.fullmatch(project_id) is not None


def project_id_shape(project_id: str) -> ProjectIdShape:
    """Which generation of project id ``project_id`` is.

    ``opaque`` for ``prj_<16 hex>``; ``remote`` for legacy ids derived from a Git remote
    (``remote:github.com/owner/repo``); ``path`` for everything else, legacy ids that were the
    project's root path. Legacy ids are never rekeyed; this exists only to describe them.
    """
    if is_opaque_project_id(project_id):
        return "opaque"
    if project_id.startswith("remote:"):
        return "remote"
    return "path"
