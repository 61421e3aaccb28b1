"""A parent's mode mapped onto another provider's modes (a child created through the tools
inherits its parent's mode, docs/mcp.md).

Modes are provider-specific, so they are compared by the :data:`~paseo_hookspecs.interfaces.
agent.ModeAccess` level each provider declares on its modes: the child gets the mode of the
parent's level, or, when its provider has none, of the nearest level **below** it (a child is
never given more autonomy than its parent). A parent mode without a level, or a provider
without a mode at or below it, gives no mode (the provider's default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from paseo_hookspecs.interfaces.agent import ModeAccess, ModeInfo

LEVELS: tuple[ModeAccess, ...] = get_args(ModeAccess)
"""Least autonomy first."""


def mapped_mode(
    parent_mode: str, parent_modes: Sequence[ModeInfo], child_modes: Sequence[ModeInfo]
) -> str | None:
    """The child's mode for a parent in ``parent_mode`` (see the module docstring)."""
    level = next((m.access for m in parent_modes if m.id == parent_mode), None)
    if level is None:
        return None
    for candidate in reversed(LEVELS[: LEVELS.index(level) + 1]):
        mode = next((m for m in child_modes if m.access == candidate), None)
        if mode is not None:
            return mode.id
    return None
