"""Codex's mode presets: an approval policy plus a sandbox, as Codex's own UI offers them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.interfaces.agent import ModeInfo


@dataclass(frozen=True)
class ModePreset:
    """One mode: what ``thread/start`` (``sandbox``) and ``turn/start`` (``sandboxPolicy``) get."""

    info: ModeInfo
    approval_policy: str
    sandbox: str
    sandbox_policy: dict[str, Any]


MODES: dict[str, ModePreset] = {
    preset.info.id: preset
    for preset in (
        ModePreset(
            ModeInfo(
                id="auto",
                label="Auto",
                description="Works in the workspace freely; asks before leaving the sandbox.",
                access="edits",
            ),
            "on-request",
            "workspace-write",
            {"type": "workspaceWrite"},
        ),
        ModePreset(
            ModeInfo(
                id="read-only",
                label="Read only",
                description="Reads the workspace; asks before changing anything.",
                access="read-only",
            ),
            "on-request",
            "read-only",
            {"type": "readOnly"},
        ),
        ModePreset(
            ModeInfo(
                id="untrusted",
                label="Ask first",
                description="Asks before every command that is not known to be read-only.",
                access="ask",
            ),
            "untrusted",
            "workspace-write",
            {"type": "workspaceWrite"},
        ),
        ModePreset(
            ModeInfo(
                id="full-access",
                label="Full access",
                description="Never asks; no sandbox, network on.",
                access="full",
            ),
            "never",
            "danger-full-access",
            {"type": "dangerFullAccess"},
        ),
    )
}

DEFAULT_MODE = "auto"
