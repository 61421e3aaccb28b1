"""Claude Code's permission modes and effort levels, and the checks of a requested one (shared
by the provider, which starts a process in a mode, and the session, which switches it live)."""

from __future__ import annotations

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.agent import ModeInfo, ThinkingOption

MODES: tuple[ModeInfo, ...] = (
    ModeInfo(
        id="default", label="Default", description="Ask before edits and commands", access="ask"
    ),
    ModeInfo(
        id="acceptEdits",
        label="Accept edits",
        description="Edit files without asking",
        access="edits",
    ),
    ModeInfo(
        id="plan",
        label="Plan",
        description="Explore and propose a plan; change nothing",
        access="read-only",
    ),
    ModeInfo(
        id="bypassPermissions",
        label="Bypass permissions",
        description="Never ask (as root needs IS_SANDBOX=1)",
        access="full",
    ),
)
MODE_IDS: tuple[str, ...] = tuple(mode.id for mode in MODES)

THINKING_IDS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
"""Claude Code's effort levels (``--effort``; ``effortLevel`` in the flag settings)."""

THINKING_OPTIONS = [ThinkingOption(id=level, label=level.capitalize()) for level in THINKING_IDS]


def check_mode(mode_id: str) -> None:
    """``InvalidParams`` naming the modes when Claude Code has no mode ``mode_id``."""
    if mode_id not in MODE_IDS:
        raise InvalidParams(f"Claude Code has no mode {mode_id!r} (modes: {', '.join(MODE_IDS)})")


def check_thinking(option_id: str) -> None:
    """``InvalidParams`` naming the levels when Claude Code has no effort level ``option_id``."""
    if option_id not in THINKING_IDS:
        raise InvalidParams(
            f"Claude Code has no thinking level {option_id!r} (levels: {', '.join(THINKING_IDS)})"
        )
