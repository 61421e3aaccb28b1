"""The Snapshot's cell grid and scrollback rows (``TerminalStateSchema``)."""

from __future__ import annotations

import pyte
from paseo_tswire import terminal_grid
from paseo_tswire.models.terminal import TerminalState

from paseo.terminals.screen import ScreenModel


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


def test_scrollback_rows_equal_the_emulators_cells_of_the_same_output() -> None:
    output = (
        "\x1b[1;31mbold red\x1b[0m plain \x1b[38;2;1;2;3mrgb\x1b[0m\r\n"
        "\x1b[7minverse\x1b[27m \x1b[4;3munder italic\x1b[0m \x1b[9mgone\x1b[0m\r\n"
        "\x1b[92;104mbright\x1b[39m bg only \x1b[49m\x1b[1mbold\x1b[22m not\r\n"
        "wide 中文 end\r\n"
    )
    # The kernel renders each line that scrolls off as text and SGR sequences...
    model = ScreenModel(30, 2, scrollback=100)
    model.feed(output.encode() + b"\r\n" * 2)
    rows = terminal_grid.state("", columns=30, rows=2, scrollback=list(model.history)).scrollback
    assert len(rows) >= 4
    # ... which read back as the cells an emulator shows for the same output.
    reference = pyte.Screen(30, 8)
    pyte.Stream(reference).feed(output)
    for y, row in enumerate(rows[:4]):
        expected = [terminal_grid.cell(reference.buffer[y][x]) for x in range(30)]
        while expected and expected[-1] == terminal_grid.BLANK:
            expected.pop()
        assert row == expected, y
