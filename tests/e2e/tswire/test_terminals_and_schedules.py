"""Terminals (JSON requests and the binary stream: Snapshot as a strict xterm cell grid,
Input, Resize, Output) and ``schedule/*`` over the TypeScript protocol, on a real daemon."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon
from paseo_tswire.models.terminal import TerminalState

pytestmark = pytest.mark.e2e

OUTPUT, INPUT, RESIZE, SNAPSHOT = 1, 2, 3, 4


def test_terminal_lifecycle_and_binary_stream(ts_daemon: TsDaemon, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello("cid_terminals", client_type="mobile")
        client.session({"type": "subscribe_terminals_request", "cwd": cwd})
        empty = client.wait_for(lambda m: m["type"] == "terminals_changed")
        assert empty["payload"] == {"cwd": cwd, "terminals": []}

        created = client.request("create_terminal_request", "create_terminal_response", cwd=cwd)
        assert created["error"] is None
        terminal = created["terminal"]
        assert terminal["cwd"] == cwd
        terminal_id = terminal["id"]
        changed = client.wait_for(
            lambda m: m["type"] == "terminals_changed" and m["payload"]["terminals"] != []
        )
        assert [t["id"] for t in changed["payload"]["terminals"]] == [terminal_id]
        listed = client.request("list_terminals_request", "list_terminals_response", cwd=cwd)
        assert [t["id"] for t in listed["terminals"]] == [terminal_id]

        subscribed = client.request(
            "subscribe_terminal_request", "subscribe_terminal_response", terminalId=terminal_id
        )
        assert subscribed["error"] is None
        slot = subscribed["slot"]
        snapshot = client.wait_binary(lambda f: f[0] == SNAPSHOT and f[1] == slot)
        state = TerminalState.model_validate_json(snapshot[2:])
        assert len(state.grid) == state.rows
        assert all(len(row) == state.cols for row in state.grid)

        # Input as a binary frame; the shell's echo comes back as Output frames.
        client.ws.send(bytes([INPUT, slot]) + b"echo ts-$((40+2))\r")
        seen = bytearray()

        def answered(frame: bytes) -> bool:
            if frame[0] == OUTPUT and frame[1] == slot:
                seen.extend(frame[2:])
            return b"ts-42" in seen

        client.wait_binary(answered)
        client.ws.send(bytes([RESIZE, slot]) + json.dumps({"rows": 30, "cols": 100}).encode())
        # The same as a JSON message, as `paseo terminal send-keys` sends it unsubscribed.
        client.session(
            {
                "type": "terminal_input",
                "terminalId": terminal_id,
                "message": {"type": "input", "data": "echo json-$((1+1))\r"},
            }
        )
        client.wait_binary(lambda f: answered(f) and b"json-2" in seen)
        captured = client.request(
            "capture_terminal_request", "capture_terminal_response", terminalId=terminal_id
        )
        assert any("ts-42" in line for line in captured["lines"])
        assert captured["totalLines"] >= len(captured["lines"])

        killed = client.request(
            "kill_terminal_request", "kill_terminal_response", terminalId=terminal_id
        )
        assert killed["success"] is True
        client.wait_for(lambda m: m["type"] == "terminal_stream_exit")
        gone = client.request(
            "subscribe_terminal_request", "subscribe_terminal_response", terminalId=terminal_id
        )
        assert gone["error"]


def test_schedules(ts_daemon: TsDaemon, tmp_path: Path) -> None:
    with TsClient(socket_path=ts_daemon.socket_path) as client:
        client.hello("cid_schedules")
        created = client.request(
            "schedule/create",
            "schedule/create/response",
            prompt="say hi",
            name="yearly",
            cadence={"type": "cron", "expression": "0 0 1 1 *"},
            target={"type": "new-agent", "config": {"provider": "claude", "cwd": str(tmp_path)}},
        )
        assert created["error"] is None, created
        schedule = created["schedule"]
        schedule_id = schedule["id"]
        assert (schedule["name"], schedule["status"]) == ("yearly", "active")
        assert schedule["target"] == {
            "type": "new-agent",
            "config": {"provider": "claude", "cwd": str(tmp_path)},
        }
        listed = client.request("schedule/list", "schedule/list/response")
        assert [s["id"] for s in listed["schedules"]] == [schedule_id]
        inspected = client.request(
            "schedule/inspect", "schedule/inspect/response", scheduleId=schedule_id
        )
        assert inspected["schedule"]["runs"] == []
        logs = client.request("schedule/logs", "schedule/logs/response", scheduleId=schedule_id)
        assert logs == {
            "__type": "schedule/logs/response",
            "requestId": logs["requestId"],
            "runs": [],
            "error": None,
        }
        paused = client.request("schedule/pause", "schedule/pause/response", scheduleId=schedule_id)
        assert paused["schedule"]["status"] == "paused"
        resumed = client.request(
            "schedule/resume", "schedule/resume/response", scheduleId=schedule_id
        )
        assert resumed["schedule"]["status"] == "active"
        deleted = client.request(
            "schedule/delete", "schedule/delete/response", scheduleId=schedule_id
        )
        assert deleted["error"] is None
        missing = client.request(
            "schedule/inspect", "schedule/inspect/response", scheduleId=schedule_id
        )
        assert missing["schedule"] is None
        assert missing["error"]


def _text(row: list[Any]) -> str:
    return "".join(cell.char for cell in row).rstrip()


def test_a_fresh_snapshot_carries_the_scrollback(ts_daemon: TsDaemon, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    with TsClient(socket_path=ts_daemon.socket_path) as typist, TsClient(
        socket_path=ts_daemon.socket_path
    ) as late:
        typist.hello("cid_scrollback_typist", client_type="mobile")
        late.hello("cid_scrollback_late", client_type="mobile")
        created = typist.request("create_terminal_request", "create_terminal_response", cwd=cwd)
        terminal_id = created["terminal"]["id"]
        slot = typist.request(
            "subscribe_terminal_request", "subscribe_terminal_response", terminalId=terminal_id
        )["slot"]
        # Sixty lines on a 24-row screen, the first in red: most scroll off the top.
        script = "printf '\\033[31mred-0\\033[0m\\n'; for i in $(seq 1 60); do echo line-$i; done\r"
        typist.ws.send(bytes([INPUT, slot]) + script.encode())
        seen = bytearray()

        def printed(frame: bytes) -> bool:
            if frame[0] == OUTPUT and frame[1] == slot:
                seen.extend(frame[2:])
            return b"line-60\r\n" in seen

        # The screen model digests output before it is published: it holds line-60 now.
        typist.wait_binary(printed)

        fresh = late.request(
            "subscribe_terminal_request", "subscribe_terminal_response", terminalId=terminal_id
        )["slot"]
        frame = late.wait_binary(lambda f: f[0] == SNAPSHOT and f[1] == fresh)
        state = TerminalState.model_validate_json(frame[2:])  # strict: the client's schema
        assert (state.rows, state.cols, len(state.grid)) == (24, 80, 24)
        back = [_text(row) for row in state.scrollback]
        shown = [_text(row) for row in state.grid]
        # The earlier lines are above the screen, in order, and none is on both.
        assert back.index("line-1") < back.index("line-2") < back.index("line-30")
        assert "line-60" in shown
        numbered = [t for t in back + shown if t.startswith("line-")]
        assert numbered == [f"line-{i}" for i in range(1, 61)]
        assert all(len(row) <= state.cols for row in state.scrollback)
        red = state.scrollback[back.index("red-0")][0]
        assert (red.char, red.fg, red.fgMode) == ("r", 1, 1)
        typist.request("kill_terminal_request", "kill_terminal_response", terminalId=terminal_id)
