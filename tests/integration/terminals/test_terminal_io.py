"""Terminals through the real daemon: placement, typing, capture, full-screen programs, resize."""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.waiting import wait_for
from integration.terminals.support import Terminals
from paseo_hookspecs.errors import NotFound


def test_a_shell_in_a_workspace_echoes_and_capture_shows_it(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path
) -> None:
    t = terminal_daemon()
    workspace_id = t.workspace(tmp_path / "project")
    terminal = t.create(workspaceId=workspace_id)
    assert terminal["workspaceId"] == workspace_id
    assert terminal["cwd"] == str(tmp_path / "project")

    t.type(terminal["terminalId"], "echo hi\r")
    t.wait_line(terminal["terminalId"], "hi")

    t.type(terminal["terminalId"], "pwd; echo $PASEO_WORKSPACE_ID\r")
    t.wait_line(terminal["terminalId"], workspace_id)
    assert str(tmp_path / "project") in t.lines(terminal["terminalId"])


def test_a_cwd_is_placed_into_its_workspace_and_lists_are_workspace_scoped(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path
) -> None:
    t = terminal_daemon()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    in_a = t.create(cwd=str(tmp_path / "a"))
    in_b = t.create(cwd=str(tmp_path / "b"))
    workspace_a = t.workspace(tmp_path / "a")
    assert in_a["workspaceId"] == workspace_a
    assert in_b["workspaceId"] != workspace_a

    scoped = t.call("terminal.list", {"workspaceId": workspace_a})["terminals"]
    assert [x["terminalId"] for x in scoped] == [in_a["terminalId"]]
    everything = t.call("terminal.list")["terminals"]
    assert {x["terminalId"] for x in everything} == {in_a["terminalId"], in_b["terminalId"]}


def test_capture_ranges_and_ansi(terminal_daemon: Callable[..., Terminals], tmp_path: Path) -> None:
    t = terminal_daemon()
    terminal_id = t.create(cwd=str(tmp_path))["terminalId"]
    t.type(terminal_id, "for i in 1 2 3; do echo line$i; done; printf '\\033[31mRED\\033[0m\\n'\r")
    t.wait_line(terminal_id, "RED")

    everything = t.lines(terminal_id)
    red = everything.index("RED")
    assert everything[red - 3 : red] == ["line1", "line2", "line3"]
    assert t.lines(terminal_id, start=red - 3, end=red - 2) == ["line1", "line2"]
    assert t.lines(terminal_id, start=-1) == everything[-1:]
    colored = t.lines(terminal_id, start=red, end=red, ansi=True)
    assert colored == ["\x1b[31mRED\x1b[0m"]


def test_a_full_screen_program_renders_in_capture(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path, curses_script: str
) -> None:
    t = terminal_daemon()
    terminal_id = t.create(cwd=str(tmp_path), columns=90, rows=20)["terminalId"]
    t.type(terminal_id, f"{curses_script}\r")
    lines = t.wait_line(terminal_id, "PASEO-CURSES-READY")
    row = next(line for line in lines if "PASEO-CURSES-READY" in line)
    assert row == " " * 10 + "PASEO-CURSES-READY"
    assert " " * 10 + "width=90" in lines
    t.type(terminal_id, "q")


def test_resize_reaches_the_program(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path
) -> None:
    t = terminal_daemon()
    terminal_id = t.create(cwd=str(tmp_path), columns=80, rows=24)["terminalId"]
    t.type(terminal_id, "tput cols\r")
    t.wait_line(terminal_id, "80")
    resized = t.call("terminal.resize", {"terminalId": terminal_id, "columns": 123, "rows": 41})
    assert (resized["terminal"]["columns"], resized["terminal"]["rows"]) == (123, 41)
    t.type(terminal_id, "echo size=$(tput cols)x$(tput lines)\r")
    t.wait_line(terminal_id, "size=123x41")


def test_a_subscriber_gets_the_screen_then_live_output(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path
) -> None:
    t = terminal_daemon()
    terminal_id = t.create(cwd=str(tmp_path))["terminalId"]
    t.type(terminal_id, "echo before-subscribe\r")
    t.wait_line(terminal_id, "before-subscribe")

    received: list[dict[str, Any]] = []
    lock = threading.Lock()

    def on_output(method: str, params: dict[str, Any]) -> None:
        with lock:
            received.append(params)

    t.client.on("terminal.output", on_output)
    subscribed = t.call("terminal.subscribe", {"terminalId": terminal_id})
    assert subscribed["stream"] == f"terminal:{terminal_id}"
    assert "before-subscribe" in subscribed["snapshot"]
    t.type(terminal_id, "echo after-subscribe\r")

    def live_text() -> str:
        with lock:
            chunks = sorted(received, key=_offset)
        # Output still pending when the snapshot was taken may arrive after it: a client keeps
        # only the bytes from the snapshot's offset on. What remains must be contiguous.
        position = subscribed["offset"]
        text = b""
        for chunk in chunks:
            data = base64.b64decode(chunk["data"])
            if chunk["offset"] + len(data) <= position:
                continue
            assert chunk["offset"] <= position, "a gap in the output offsets"
            assert chunk["dropped"] == 0
            text += data[position - chunk["offset"] :]
            position = chunk["offset"] + len(data)
        return text.decode(errors="replace")

    wait_for(lambda: "after-subscribe" in live_text(), 20, "live output after the snapshot")

    left = t.call("terminal.unsubscribe", {"terminalId": terminal_id})
    assert left["unsubscribed"] is True


def _offset(params: dict[str, Any]) -> int:
    return int(params["offset"])


def test_input_to_an_unknown_terminal_is_not_found(
    terminal_daemon: Callable[..., Terminals],
) -> None:
    t = terminal_daemon()
    with pytest.raises(NotFound):
        t.type("nope", "x")
