"""A parent's mode mapped onto another provider's modes, with the modes the built-in
providers declare (the table in docs/mcp.md)."""

from __future__ import annotations

import pytest
from paseo_acp.omp import MODES as OMP_MODES
from paseo_claude.provider import MODES as CLAUDE_MODES
from paseo_codex.modes import MODES as CODEX_PRESETS
from paseo_hookspecs.interfaces.agent import ModeInfo
from paseo_mcp.mode_mapping import mapped_mode
from paseo_opencode.mapping import BUILT_IN_MODES as OPENCODE_MODES

CODEX_MODES = [preset.info for preset in CODEX_PRESETS.values()]
OPENCODE = [mode.info for mode in OPENCODE_MODES.values()]


@pytest.mark.parametrize(
    ("claude", "codex"),
    [
        ("plan", "read-only"),
        ("default", "untrusted"),
        ("acceptEdits", "auto"),
        ("bypassPermissions", "full-access"),
    ],
)
def test_claude_and_codex_modes_map_both_ways(claude: str, codex: str) -> None:
    assert mapped_mode(claude, CLAUDE_MODES, CODEX_MODES) == codex
    assert mapped_mode(codex, CODEX_MODES, CLAUDE_MODES) == claude


def test_a_missing_level_maps_to_the_nearest_one_below_never_above() -> None:
    # OpenCode has no "edit without asking" mode: the child asks instead of never asking.
    assert mapped_mode("acceptEdits", CLAUDE_MODES, OPENCODE) == "build"
    assert mapped_mode("auto", CODEX_MODES, OMP_MODES) == "default"
    assert mapped_mode("bypassPermissions", CLAUDE_MODES, OPENCODE) == "full-access"
    only_full = [ModeInfo(id="yolo", label="Yolo", access="full")]
    assert mapped_mode("plan", CLAUDE_MODES, only_full) is None


def test_modes_without_a_level_map_to_nothing() -> None:
    unlevelled = [ModeInfo(id="custom", label="Custom")]
    assert mapped_mode("custom", unlevelled, CODEX_MODES) is None
    assert mapped_mode("default", CLAUDE_MODES, unlevelled) is None
    assert mapped_mode("no-such-mode", CLAUDE_MODES, CODEX_MODES) is None


def test_every_built_in_mode_declares_its_level() -> None:
    for mode in [*CLAUDE_MODES, *CODEX_MODES, *OPENCODE, *OMP_MODES]:
        assert mode.access is not None, mode.id
