"""The Snapshot's cell grid and scrollback rows (``TerminalStateSchema``)."""

from __future__ import annotations

from paseo_tswire import terminal_grid
from paseo_tswire.models.terminal import TerminalState


def _text(row: list[terminal_grid.Cell]) -> str:
    return "".join(cell.char for cell in row)


def test_scrollback_rows_are_cut_to_the_screen_and_trimmed() -> None:
    state = terminal_grid.state(
        "\x1b[H$ ",
        columns=10,
        rows=2,
        scrollback=["plain", "\x1b[44m  \x1b[0m", "x" * 25, ""],
    )
    rows = state.scrollback
    assert [_text(row) for row in rows] == ["plain", "  ", "x" * 10, ""]
    # A blank cell with a background is visible: it stays, coloured.
    assert [(c.bg, c.bgMode) for c in rows[1]] == [(4, 1), (4, 1)]
    # The grid keeps the full width of every row, as the TypeScript daemon's does.
    assert [len(row) for row in state.grid] == [10, 10]


def test_the_encoded_snapshot_is_the_models_exact_shape() -> None:
    state = terminal_grid.state(
        "\x1b[1mtop\x1b[0m", columns=8, rows=3, title="t", scrollback=["\x1b[31mred\x1b[0m"]
    )
    decoded = TerminalState.model_validate_json(terminal_grid.encode(state))
    assert decoded == state
    assert (decoded.scrollback[0][0].fg, decoded.grid[0][0].bold) == (1, True)
