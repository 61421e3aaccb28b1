"""Where durable records live under ``$PASEO_HOME``, as relative paths.

The layout is the one TypeScript Paseo uses, so a Python daemon can open a home the TypeScript
daemon wrote. Paths are returned as :class:`~pathlib.PurePosixPath` relative to the home; join
them onto the home directory to get a real path.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

__all__ = [
    "AGENTS_DIR",
    "MANAGED_PROCESSES_DIR",
    "PLUGIN_SOURCES_FILE",
    "PROJECTS_FILE",
    "PUSH_TOKENS_FILE",
    "SCHEDULES_DIR",
    "WORKSPACES_FILE",
    "WORKSPACE_LABELS_FILE",
    "WORKSPACE_LABELS_TRANSACTION_FILE",
    "agent_record_path",
    "managed_process_record_path",
    "sanitize_cwd",
    "schedule_record_path",
]

AGENTS_DIR = PurePosixPath("agents")
"""One directory per sanitized cwd, one ``{agentId}.json`` per agent inside it."""

SCHEDULES_DIR = PurePosixPath("schedules")
"""One ``{scheduleId}.json`` per schedule."""

PROJECTS_FILE = PurePosixPath("projects/projects.json")
"""The project registry: a JSON array of project records."""

WORKSPACES_FILE = PurePosixPath("projects/workspaces.json")
"""The workspace registry: a JSON array of workspace records."""

WORKSPACE_LABELS_FILE = PurePosixPath("projects/workspace-labels.json")
"""The host's shared workspace label catalog: a JSON array of label definitions."""

WORKSPACE_LABELS_TRANSACTION_FILE = PurePosixPath("projects/workspace-labels.transaction.json")
"""The recoverable compound commit of a label rename or delete (catalog plus assignments)."""

MANAGED_PROCESSES_DIR = PurePosixPath("runtime/managed-processes")
"""One ``{recordId}.json`` per helper process Paseo owns."""

PLUGIN_SOURCES_FILE = PurePosixPath("plugins/sources.json")
"""Managed plugin sources: plugin id to acquisition kind (and Git remote)."""

PUSH_TOKENS_FILE = PurePosixPath("push-tokens.json")
"""Expo push notification tokens: ``{"tokens": [...]}``."""

_SEPARATORS = "\\/"
_UNC_ROOT = re.compile(r"[\\/]{2}[^\\/]+[\\/]+[^\\/]+")
_DRIVE = re.compile(r"[A-Za-z]:")
_ROOT_PUNCTUATION = re.compile(r"[:\\/]+")
_SEPARATOR_RUN = re.compile(r"[\\/]+")


def _filesystem_root(cwd: str) -> str:
    """The root of ``cwd`` under Windows rules, which also cover POSIX roots.

    A UNC root (``\\\\server\\share\\``, either separator) takes the server, the share and one
    following separator; a drive root is ``C:`` plus one separator when there is one; any other
    leading separator is a one-character root; a relative path has no root.
    """
    unc = _UNC_ROOT.match(cwd)
    if unc:
        end = unc.end()
        return cwd[: end + 1] if end < len(cwd) else cwd
    if cwd[:1] and cwd[0] in _SEPARATORS:
        return cwd[0]
    if _DRIVE.match(cwd):
        return cwd[:3] if cwd[2:3] and cwd[2] in _SEPARATORS else cwd[:2]
    return ""


def sanitize_cwd(cwd: str) -> str:
    """The ``agents/`` directory name of an agent whose cwd is ``cwd``.

    The filesystem root is stripped and separator runs (``/`` or ``\\``) become ``-``; a drive or
    UNC root survives as a prefix without its punctuation (``C:\\src\\app`` -> ``C-src-app``,
    ``\\\\srv\\share\\x`` -> ``srv-share-x``). Trailing separators are ignored. A cwd that is only a
    root maps to the root's name, or to ``root`` for ``/`` (and for the empty string).
    Examples: ``/Users/alice/code/api`` -> ``Users-alice-code-api``.
    """
    root = _filesystem_root(cwd)
    rest = cwd[len(root) :].rstrip(_SEPARATORS)
    root_name = _ROOT_PUNCTUATION.sub("-", root).strip("-")
    if not rest:
        return root_name or "root"
    prefix = f"{root_name}-" if root_name else ""
    return prefix + _SEPARATOR_RUN.sub("-", rest)


def agent_record_path(agent_id: str, cwd: str) -> PurePosixPath:
    """``agents/{sanitized-cwd}/{agentId}.json`` for an agent running in ``cwd``."""
    return AGENTS_DIR / sanitize_cwd(cwd) / f"{agent_id}.json"


def schedule_record_path(schedule_id: str) -> PurePosixPath:
    """``schedules/{scheduleId}.json``."""
    return SCHEDULES_DIR / f"{schedule_id}.json"


def managed_process_record_path(record_id: str) -> PurePosixPath:
    """``runtime/managed-processes/{recordId}.json``."""
    return MANAGED_PROCESSES_DIR / f"{record_id}.json"
