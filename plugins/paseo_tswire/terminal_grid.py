"""A terminal screen as the xterm cell grid of a Snapshot frame.

This daemon's ``terminal.subscribe`` answers the screen as ANSI text; replaying it into a pyte
screen of the same size recovers the cells. Colours follow xterm's modes: 1 for the 16 ANSI
colours (0-15), 3 for RGB (``0xRRGGBB``; pyte resolves 256-colour indexes to RGB too), none
for the default colour.

The scrollback (``terminal.subscribe`` with ``scrollback``: the lines above the screen as ANSI
text, oldest first) becomes the Snapshot's ``scrollback`` rows, which the app paints above the
grid. Each row holds the line's cells up to its last visible one, at most the screen's width:
the app's renderer drops trailing blank cells and paints with autowrap off, so a row padded to
the width (as the TypeScript daemon's are) looks the same and costs several times the bytes.
Equal cells are one shared model and are serialized once per frame.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

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


BLANK = Cell(char=" ")
_SGR = re.compile(r"\x1b\[[0-9;:]*[A-Za-z]")


class _Cells:
    """One :class:`Cell` per distinct pyte cell (pyte cells are hashable tuples)."""

    def __init__(self) -> None:
        self._known: dict[pyte.screens.Char, Cell] = {}

    def __call__(self, char: pyte.screens.Char) -> Cell:
        found = self._known.get(char)
        if found is None:
            found = self._known[char] = cell(char)
        return found


def _scrollback(lines: Sequence[str], columns: int, cells: _Cells) -> list[list[Cell]]:
    """Rows of ``lines`` painted on a screen wide enough for the widest (a line may have
    scrolled off a wider screen), each cut to its last visible cell within ``columns``."""
    if not lines:
        return []
    # Two cells per character bounds a line of wide characters.
    width = max(columns, *(2 * len(_SGR.sub("", line)) for line in lines))
    screen = pyte.Screen(width, len(lines))
    pyte.Stream(screen).feed("\r\n".join(f"\x1b[0m{line}" for line in lines))
    rows = []
    for y in range(len(lines)):
        row = [cells(screen.buffer[y][x]) for x in range(columns)]
        end = len(row)
        while end > 0 and row[end - 1] == BLANK:
            end -= 1
        rows.append(row[:end])
    return rows


def state(
    ansi: str,
    *,
    columns: int,
    rows: int,
    title: str | None = None,
    scrollback: Sequence[str] = (),
) -> TerminalState:
    """The grid of ``ansi`` painted on a ``columns`` by ``rows`` screen, under the rows of the
    ``scrollback`` lines."""
    screen = pyte.Screen(columns, rows)
    stream = pyte.Stream(screen)
    stream.feed(ansi)
    cells = _Cells()
    grid = [[cells(screen.buffer[row][col]) for col in range(columns)] for row in range(rows)]
    cursor = TerminalCursor(
        row=screen.cursor.y, col=screen.cursor.x, hidden=True if screen.cursor.hidden else None
    )
    return TerminalState(
        rows=rows,
        cols=columns,
        grid=grid,
        scrollback=_scrollback(scrollback, columns, cells),
        cursor=cursor,
        title=title or None,
    )


def encode(terminal: TerminalState) -> bytes:
    """The Snapshot payload: ``terminal`` as compact JSON, each distinct cell dumped once."""
    dumped: dict[int, dict[str, Any]] = {}

    def rows(grid: list[list[Cell]]) -> list[list[dict[str, Any]]]:
        out = []
        for row in grid:
            line = []
            for item in row:
                found = dumped.get(id(item))
                if found is None:
                    found = dumped[id(item)] = item.wire()
                line.append(found)
            out.append(line)
        return out

    data = terminal.model_copy(update={"grid": [], "scrollback": []}).wire()
    data["grid"] = rows(terminal.grid)
    data["scrollback"] = rows(terminal.scrollback)
    return json.dumps(data, separators=(",", ":")).encode()
