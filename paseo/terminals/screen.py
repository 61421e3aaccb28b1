"""The headless screen model of one terminal: a pyte screen plus bounded scrollback.

Every byte a terminal's program writes is fed here, so :meth:`ScreenModel.capture` can answer
with plain or ANSI text for any line range and :meth:`ScreenModel.snapshot` can repaint the
current screen for a client that joins late.

pyte's ``HistoryScreen`` wraps every screen event in Python-level hooks, which halves the
throughput of a busy terminal; this model instead keeps its own history by rendering each line
that scrolls off the top of a full-screen scroll region into one ANSI string. A string per line
costs a fraction of pyte's per-cell ``Char`` tuples, so scrollback stays small.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from collections.abc import Callable

import pyte
from pyte import modes as mo
from pyte.graphics import BG_AIXTERM, BG_ANSI, FG_AIXTERM, FG_ANSI
from pyte.screens import Char, Margins

_SGR = re.compile(r"\x1b\[[0-9;]*m")
_FG = {name: code for code, name in {**FG_ANSI, **FG_AIXTERM}.items() if name != "default"}
_BG = {name: code for code, name in {**BG_ANSI, **BG_AIXTERM}.items() if name != "default"}
_HEX = re.compile(r"^[0-9a-fA-F]{6}$")


def _colour(value: str, names: dict[str, int], extended: int) -> list[str]:
    if value == "default":
        return []
    if value in names:
        return [str(names[value])]
    if _HEX.match(value):
        r, g, b = (int(value[i : i + 2], 16) for i in (0, 2, 4))
        return [str(extended), "2", str(r), str(g), str(b)]
    return []


def _sgr(char: Char) -> str:
    """The SGR sequence that sets ``char``'s attributes from a reset state ("" when plain)."""
    codes: list[str] = []
    if char.bold:
        codes.append("1")
    if char.italics:
        codes.append("3")
    if char.underscore:
        codes.append("4")
    if char.blink:
        codes.append("5")
    if char.reverse:
        codes.append("7")
    if char.strikethrough:
        codes.append("9")
    codes += _colour(char.fg, _FG, 38)
    codes += _colour(char.bg, _BG, 48)
    return f"\x1b[{';'.join(codes)}m" if codes else ""


def render_line(line: dict[int, Char], columns: int, *, ansi: bool) -> str:
    """One screen row as text, trailing blanks trimmed; with ``ansi`` its attributes as SGR
    sequences (reset at the end when any was set).

    pyte rows are sparse (cells never written are absent and read as blanks), so only the
    written cells are looked at: a scrolling ``yes`` costs one cell per line, not a row.
    """
    written = [x for x in line if x < columns]
    if not written:
        return ""
    end = max(written) + 1
    while end > 0 and _blank(line[end - 1], ansi=ansi):
        end -= 1
    if not ansi:
        return "".join(line[x].data for x in range(end))
    parts: list[str] = []
    current = ""
    for x in range(end):
        char = line[x]
        style = _sgr(char)
        if style != current:
            parts.append("\x1b[0m" + style if current else style)
            current = style
        parts.append(char.data)
    if current:
        parts.append("\x1b[0m")
    return "".join(parts)


def _blank(char: Char, *, ansi: bool) -> bool:
    """A cell that shows nothing (with ``ansi``: not even a background or reverse video)."""
    if char.data != " ":
        return False
    return not ansi or (char.bg == "default" and not char.reverse)


def strip_ansi(text: str) -> str:
    return _SGR.sub("", text)


class _Screen(pyte.Screen):
    """A pyte screen that hands each line scrolling off the top to ``on_scroll``, answers the
    program's terminal queries (cursor position, device attributes) through ``reply``, and
    draws runs of printable ASCII quickly.

    pyte's ``draw`` measures and builds a cell per character; for printable ASCII (the bulk of
    any flood) every width is 1, so runs are copied a row at a time, and cells are shared per
    attribute set (``Char`` is an immutable tuple), which also makes rows smaller.
    """

    def __init__(
        self,
        columns: int,
        lines: int,
        on_scroll: Callable[[dict[int, Char]], None],
        reply: Callable[[str], None],
    ) -> None:
        super().__init__(columns, lines)
        self._on_scroll = on_scroll
        self._reply = reply
        self._cells_attrs: Char | None = None
        self._cells: dict[str, Char] = {}

    def draw(self, data: str) -> None:
        if mo.IRM in self.mode or not (data.isascii() and data.isprintable()):
            super().draw(data)
            return
        data = data.translate(self.g1_charset if self.charset else self.g0_charset)
        cursor = self.cursor
        attrs = cursor.attrs
        if attrs is not self._cells_attrs:
            self._cells_attrs = attrs
            self._cells = {}
        cells = self._cells
        columns = self.columns
        autowrap = mo.DECAWM in self.mode
        start = 0
        while start < len(data):
            if cursor.x == columns:
                if autowrap:
                    self.dirty.add(cursor.y)
                    self.carriage_return()
                    self.linefeed()
                else:
                    cursor.x -= 1
            line = self.buffer[cursor.y]
            run = data[start : start + columns - cursor.x]
            x = cursor.x
            for char in run:
                cell = cells.get(char)
                if cell is None:
                    cell = cells[char] = attrs._replace(data=char)
                line[x] = cell
                x += 1
            cursor.x = x
            start += len(run)
        self.dirty.add(cursor.y)

    def index(self) -> None:
        top, bottom = self.margins or Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0:
            self._on_scroll(self.buffer[top])
        super().index()

    def write_process_input(self, data: str) -> None:
        self._reply(data)


class ScreenModel:
    """See the module docstring. At most ``scrollback`` lines, taking at most
    ``scrollback_bytes`` of memory, are kept above the screen (the oldest go first); ``reply``
    receives the emulator's answers to the program."""

    def __init__(
        self,
        columns: int,
        rows: int,
        *,
        scrollback: int,
        scrollback_bytes: int | None = None,
        reply: Callable[[str], None] = lambda data: None,
    ) -> None:
        self.history: deque[str] = deque()
        self._max_lines = scrollback
        self._max_bytes = scrollback_bytes
        self._bytes = 0
        self._screen = _Screen(columns, rows, self._scrolled, reply)
        self._stream = pyte.ByteStream(self._screen)

    def _scrolled(self, line: dict[int, Char]) -> None:
        text = render_line(line, self._screen.columns, ansi=True)
        self.history.append(text)
        self._bytes += sys.getsizeof(text)
        # Bounded in lines and in memory: a long, heavily coloured line costs many times a
        # plain one, so a line count alone does not bound what a terminal holds.
        while self.history and (
            len(self.history) > self._max_lines
            or (self._max_bytes is not None and self._bytes > self._max_bytes)
        ):
            self._bytes -= sys.getsizeof(self.history.popleft())

    @property
    def history_bytes(self) -> int:
        """Memory the scrollback's strings take (``sys.getsizeof`` of each line)."""
        return self._bytes

    @property
    def size(self) -> tuple[int, int]:
        """``(columns, rows)``."""
        return self._screen.columns, self._screen.lines

    @property
    def title(self) -> str:
        return str(self._screen.title)

    def feed(self, data: bytes) -> None:
        self._stream.feed(data)

    def resize(self, columns: int, rows: int) -> None:
        self._screen.resize(lines=rows, columns=columns)

    def _screen_rows(self) -> int:
        """Screen rows worth showing: up to the cursor or the last non-blank row."""
        screen = self._screen
        last = screen.cursor.y
        for y in range(screen.lines - 1, last, -1):
            if render_line(screen.buffer[y], screen.columns, ansi=False):
                last = y
                break
        return last + 1

    def lines(self, *, ansi: bool) -> list[str]:
        """Scrollback then screen, oldest first."""
        screen = self._screen
        history = list(self.history) if ansi else [strip_ansi(line) for line in self.history]
        rows = [
            render_line(screen.buffer[y], screen.columns, ansi=ansi)
            for y in range(self._screen_rows())
        ]
        return history + rows

    def capture(
        self, start: int | None = None, end: int | None = None, *, ansi: bool = False
    ) -> list[str]:
        """Lines ``start``..``end`` inclusive over scrollback plus screen (0 is the oldest line,
        negative counts from the last: -1 is the last); absent bounds mean the whole text."""
        lines = self.lines(ansi=ansi)
        count = len(lines)
        first = 0 if start is None else (start + count if start < 0 else start)
        last = count - 1 if end is None else (end + count if end < 0 else end)
        first = max(first, 0)
        last = min(last, count - 1)
        return lines[first : last + 1] if first <= last else []

    def snapshot(self) -> str:
        """ANSI text that repaints the current screen and cursor on a terminal of this size."""
        screen = self._screen
        rows = [
            render_line(screen.buffer[y], screen.columns, ansi=True) for y in range(screen.lines)
        ]
        cursor = f"\x1b[{screen.cursor.y + 1};{screen.cursor.x + 1}H"
        return "\x1b[0m\x1b[H\x1b[2J" + "\r\n".join(rows) + cursor
