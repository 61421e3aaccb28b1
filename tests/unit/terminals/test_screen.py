"""The headless screen model: capture ranges, ANSI, bounded scrollback, snapshots, replies."""

from __future__ import annotations

import sys

import pyte

from paseo.terminals.screen import ScreenModel


def _printed(count: int) -> bytes:
    return b"".join(f"line{i}\r\n".encode() for i in range(count))


def test_capture_covers_scrollback_then_screen_with_inclusive_ranges() -> None:
    model = ScreenModel(20, 5, scrollback=100)
    model.feed(_printed(12))
    lines = model.capture()
    assert lines[:12] == [f"line{i}" for i in range(12)]
    assert model.capture(0, 1) == ["line0", "line1"]
    assert model.capture(-3, -2) == lines[-3:-1]
    assert model.capture(start=10) == lines[10:]
    assert model.capture(5, 2) == []
    assert model.capture(-1000, 0) == ["line0"]


def test_scrollback_is_bounded() -> None:
    model = ScreenModel(20, 5, scrollback=10)
    model.feed(_printed(100))
    assert len(model.history) == 10
    assert model.capture(0, 0) == ["line86"]


def test_scrollback_is_bounded_in_memory_too() -> None:
    model = ScreenModel(200, 5, scrollback=1000, scrollback_bytes=8192)
    # Every cell a colour change: a line of ANSI text many times its visible width.
    painted = "".join(f"\x1b[3{i % 8}m#" for i in range(200))
    model.feed(b"".join(f"{painted}\x1b[0m\r\n".encode() for _ in range(100)))
    assert 0 < model.history_bytes <= 8192
    assert model.history_bytes == sum(sys.getsizeof(line) for line in model.history)
    assert len(model.history) < 100
    # Plain lines of the same count fit: the bound is the memory, not a line count.
    plain = ScreenModel(200, 5, scrollback=1000, scrollback_bytes=8192)
    plain.feed(_printed(100))
    assert len(plain.history) == 96


def test_ansi_capture_keeps_colours_and_attributes_plain_capture_drops_them() -> None:
    model = ScreenModel(40, 5, scrollback=100)
    model.feed(b"\x1b[1;31mbold red\x1b[0m plain \x1b[38;2;1;2;3mrgb\x1b[0m\r\n")
    assert model.capture(0, 0) == ["bold red plain rgb"]
    (line,) = model.capture(0, 0, ansi=True)
    assert line == "\x1b[1;31mbold red\x1b[0m plain \x1b[38;2;1;2;3mrgb\x1b[0m"


def test_lines_that_scroll_off_keep_their_attributes() -> None:
    model = ScreenModel(20, 2, scrollback=100)
    model.feed(b"\x1b[32mgreen\x1b[0m\r\nx\r\ny\r\nz")
    assert model.capture(0, 0, ansi=True) == ["\x1b[32mgreen\x1b[0m"]
    assert model.capture(0, 0) == ["green"]


def test_trailing_blank_screen_rows_are_left_out_up_to_the_cursor() -> None:
    model = ScreenModel(20, 10, scrollback=100)
    model.feed(b"$ ")
    assert model.capture() == ["$"]
    model.feed(b"\x1b[5;1Hfar down")
    assert model.capture() == ["$", "", "", "", "far down"]


def test_a_snapshot_repaints_the_screen_and_the_cursor() -> None:
    model = ScreenModel(30, 4, scrollback=100)
    model.feed(b"hello\r\n\x1b[7mworld\x1b[0m\x1b[3;4H")
    replay = pyte.Screen(30, 4)
    pyte.ByteStream(replay).feed(model.snapshot().encode())
    assert replay.display[0].rstrip() == "hello"
    assert replay.display[1].rstrip() == "world"
    assert replay.buffer[1][0].reverse
    assert (replay.cursor.y, replay.cursor.x) == (2, 3)


def test_terminal_queries_are_answered_through_reply() -> None:
    answers: list[str] = []
    model = ScreenModel(20, 5, scrollback=100, reply=answers.append)
    model.feed(b"ab\x1b[6n")
    assert answers == ["\x1b[1;3R"]


def test_resize_changes_the_size_and_keeps_the_text() -> None:
    model = ScreenModel(20, 5, scrollback=100)
    model.feed(b"kept\r\n")
    model.resize(50, 8)
    assert model.size == (50, 8)
    assert model.capture(0, 0) == ["kept"]
