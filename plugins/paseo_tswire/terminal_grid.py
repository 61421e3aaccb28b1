"""A terminal screen as the xterm cell grid of a Snapshot frame.

This daemon's ``terminal.subscribe`` answers the screen as ANSI text; replaying it into a pyte
screen of the same size recovers the cells. Colours follow xterm's modes: 1 for the 16 ANSI
colours (0-15), 3 for RGB (``0xRRGGBB``; pyte resolves 256-colour indexes to RGB too), none
for the default colour.
"""

from __future__ import annotations

import pyte

from paseo_tswire.models.terminal import Cell, TerminalCursor, TerminalState

_NAMES = ("black", "red", "green", "brown", "blue", "magenta", "cyan", "white")
_ANSI = {name: index for index, name in enumerate(_NAMES)} | {
    f"bright{name}": index + 8 for index, name in enumerate(_NAMES)
}
_MODE_ANSI = 1
_MODE_RGB = 3


def _color(value: str) -> tuple[int | None, int | None]:
    """``(color, mode)`` of a pyte colour name or hex string; ``(None, None)`` for default."""
    if value in _ANSI:
        return _ANSI[value], _MODE_ANSI
    if len(value) == 6:
        try:
            return int(value, 16), _MODE_RGB
        except ValueError:
            return None, None
    return None, None


def cell(char: pyte.screens.Char) -> Cell:
    fg, fg_mode = _color(char.fg)
    bg, bg_mode = _color(char.bg)
    return Cell(
        char=char.data or " ",
        fg=fg,
        bg=bg,
        fgMode=fg_mode,
        bgMode=bg_mode,
        bold=True if char.bold else None,
        italic=True if char.italics else None,
        underline=True if char.underscore else None,
        inverse=True if char.reverse else None,
        strikethrough=True if char.strikethrough else None,
    )


def state(ansi: str, *, columns: int, rows: int, title: str | None = None) -> TerminalState:
    """The grid of ``ansi`` painted on a ``columns`` by ``rows`` screen."""
    screen = pyte.Screen(columns, rows)
    stream = pyte.Stream(screen)
    stream.feed(ansi)
    grid = [[cell(screen.buffer[row][col]) for col in range(columns)] for row in range(rows)]
    cursor = TerminalCursor(
        row=screen.cursor.y, col=screen.cursor.x, hidden=True if screen.cursor.hidden else None
    )
    return TerminalState(
        rows=rows, cols=columns, grid=grid, scrollback=[], cursor=cursor, title=title or None
    )
