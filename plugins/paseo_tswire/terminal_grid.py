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
Those lines hold only text and SGR sequences (the daemon renders them so), which are read
directly rather than replayed through an emulator. Equal cells are one shared model and are
serialized once per frame.
"""

from __future__ import annotations

import json
import re
import unicodedata
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


def _cached(char: pyte.screens.Char, known: dict[pyte.screens.Char, Cell]) -> Cell:
    """One :class:`Cell` per distinct pyte cell (pyte cells are hashable tuples)."""
    found = known.get(char)
    if found is None:
        found = known[char] = cell(char)
    return found


BLANK = Cell(char=" ")
_ESCAPE = re.compile(r"\x1b\[([0-9;:]*)([A-Za-z])")
_FG_BASE = {30 + i: i for i in range(8)} | {90 + i: 8 + i for i in range(8)}
_BG_BASE = {40 + i: i for i in range(8)} | {100 + i: 8 + i for i in range(8)}
_FLAGS = {1: "bold", 3: "italic", 4: "underline", 7: "inverse", 9: "strikethrough"}
_UNSET = {22: "bold", 23: "italic", 24: "underline", 27: "inverse", 29: "strikethrough"}


def _apply(codes: list[int], style: dict[str, Any]) -> None:
    """Apply one SGR sequence's codes to ``style`` (the keys of a :class:`Cell`)."""
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            style.clear()
        elif code in _FLAGS:
            style[_FLAGS[code]] = True
        elif code in _UNSET:
            style.pop(_UNSET[code], None)
        elif code in _FG_BASE:
            style.update(fg=_FG_BASE[code], fgMode=_MODE_ANSI)
        elif code in _BG_BASE:
            style.update(bg=_BG_BASE[code], bgMode=_MODE_ANSI)
        elif code == 39:
            style.pop("fg", None)
            style.pop("fgMode", None)
        elif code == 49:
            style.pop("bg", None)
            style.pop("bgMode", None)
        elif code in (38, 48) and codes[i + 1 : i + 2] == [2] and len(codes) >= i + 5:
            r, g, b = codes[i + 2 : i + 5]
            key = "fg" if code == 38 else "bg"
            style.update({key: (r << 16) | (g << 8) | b, f"{key}Mode": _MODE_RGB})
            i += 4
        i += 1


Style = tuple[tuple[str, Any], ...]
"""A cell's attributes as sorted ``(key, value)`` pairs of :class:`Cell` fields."""


class _Reader:
    """Reads scrollback lines into rows, caching what repeats across them: the style each SGR
    sequence leads to from each style, and one :class:`Cell` per character and style."""

    def __init__(self, columns: int) -> None:
        self.columns = columns
        self._styles: dict[tuple[Style, str], Style] = {}
        self._cells: dict[tuple[str, Style], Cell] = {}

    def _next(self, style: Style, params: str) -> Style:
        found = self._styles.get((style, params))
        if found is None:
            changed = dict(style)
            _apply([int(c) if c else 0 for c in re.split("[;:]", params)], changed)
            found = self._styles[(style, params)] = tuple(sorted(changed.items()))
        return found

    def row(self, line: str) -> list[Cell]:
        """One line (the daemon renders each as text and SGR sequences only) as cells, cut to
        the screen's width and to its last visible cell."""
        row: list[Cell] = []
        style: Style = ()
        position = 0
        columns = self.columns
        for match in _ESCAPE.finditer(line):
            if match.start() > position:
                self._put(row, line[position : match.start()], style)
            position = match.end()
            if match.group(2) == "m":
                style = self._next(style, match.group(1))
            if len(row) >= columns:
                break
        else:
            self._put(row, line[position:], style)
        end = min(len(row), columns)
        while end > 0 and row[end - 1] == BLANK:
            end -= 1
        return row[:end]

    def _put(self, row: list[Cell], text: str, style: Style) -> None:
        cells = self._cells
        for char in text[: self.columns - len(row)]:
            found = cells.get((char, style))
            if found is None:
                found = cells[(char, style)] = Cell(char=char, **dict(style))
            row.append(found)
            if not char.isascii() and unicodedata.east_asian_width(char) in "WF":
                # The grid's rule for a wide character's second cell (pyte, like xterm,
                # leaves it empty).
                row.append(BLANK)


def _scrollback(lines: Sequence[str], columns: int) -> list[list[Cell]]:
    reader = _Reader(columns)
    return [reader.row(line) for line in lines]


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
    known: dict[pyte.screens.Char, Cell] = {}
    grid = [
        [_cached(screen.buffer[row][col], known) for col in range(columns)] for row in range(rows)
    ]
    cursor = TerminalCursor(
        row=screen.cursor.y, col=screen.cursor.x, hidden=True if screen.cursor.hidden else None
    )
    return TerminalState(
        rows=rows,
        cols=columns,
        grid=grid,
        scrollback=_scrollback(scrollback, columns),
        cursor=cursor,
        title=title or None,
    )


def encode(terminal: TerminalState) -> bytes:
    """The Snapshot payload: ``terminal`` as compact JSON, each distinct cell encoded once
    (a full scrollback is mostly the same few cells)."""
    encoded: dict[int, str] = {}

    def rows(grid: list[list[Cell]]) -> str:
        out = []
        for row in grid:
            parts = []
            for item in row:
                found = encoded.get(id(item))
                if found is None:
                    found = encoded[id(item)] = json.dumps(item.wire(), separators=(",", ":"))
                parts.append(found)
            out.append("[" + ",".join(parts) + "]")
        return "[" + ",".join(out) + "]"

    rest = terminal.model_copy(update={"grid": [], "scrollback": []}).wire()
    del rest["grid"], rest["scrollback"]
    tail = json.dumps(rest, separators=(",", ":"))  # `{"rows":…}`: never empty
    grid, scrollback = rows(terminal.grid), rows(terminal.scrollback)
    return f'{{"grid":{grid},"scrollback":{scrollback},{tail[1:]}'.encode()
