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

NO_TOOLS = ModePreset(
    ModeInfo(id="no-tools", label="No tools", access="read-only"),
    # `never` asks for nothing: in the read-only sandbox whatever would need an approval
    # (any write) is refused and the failure goes back to the model, never approved.
    "never",
    "read-only",
    {"type": "readOnly"},
)
"""``SessionConfig.noTools`` (never listed): the read-only sandbox, approvals refused. The
tools themselves are switched off at start-up (:data:`NO_TOOLS_CONFIG`)."""

NO_TOOLS_CONFIG = (
    "features.shell_tool=false",
    "features.unified_exec=false",
    'web_search="disabled"',
    "features.goals=false",
    "mcp_servers={}",
)
"""``codex app-server -c`` overrides of a no-tools session: no shell tool, no web search, no
MCP server of the user's config. ``apply_patch`` stays offered (it cannot be switched off) and
the read-only sandbox rejects it."""
