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


def _row(line: str, columns: int, known: dict[tuple[str, tuple[Any, ...]], Cell]) -> list[Cell]:
    """One scrollback line (the daemon renders each as text and SGR sequences only) as cells,
    cut to ``columns`` and to its last visible cell."""
    row: list[Cell] = []
    style: dict[str, Any] = {}
    position = 0

    def put(text: str) -> None:
        frozen = tuple(sorted(style.items()))
        for char in text:
            if len(row) >= columns:
                return
            found = known.get((char, frozen))
            if found is None:
                found = known[(char, frozen)] = Cell(char=char, **style)
            row.append(found)
            if unicodedata.east_asian_width(char) in "WF" and len(row) < columns:
                # The grid's rule for a wide character's second cell (pyte, like xterm,
                # leaves it empty).
                row.append(BLANK)

    for match in _ESCAPE.finditer(line):
        put(line[position : match.start()])
        position = match.end()
        if match.group(2) == "m":
            _apply([int(c) if c else 0 for c in re.split("[;:]", match.group(1))], style)
    put(line[position:])
    end = len(row)
    while end > 0 and row[end - 1] == BLANK:
        end -= 1
    return row[:end]


def _scrollback(lines: Sequence[str], columns: int) -> list[list[Cell]]:
    known: dict[tuple[str, tuple[Any, ...]], Cell] = {}
    return [_row(line, columns, known) for line in lines]


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
