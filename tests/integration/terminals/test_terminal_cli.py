"""``paseo terminal`` commands against a real daemon, ``attach`` from a real PTY."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.waiting import wait_for
from integration.terminals.support import Terminals


def test_ls_create_send_keys_capture_kill(
    terminal_daemon: Callable[..., Terminals], run_paseo: Any, tmp_path: Path
) -> None:
    t = terminal_daemon()

    def paseo(*args: str) -> Any:
        return json.loads(run_paseo("terminal", *args, "-o", "json", check=True).stdout)

    created = paseo("create", "--cwd", str(tmp_path), "--columns", "100")
    terminal_id = created["terminalId"]
    assert created["columns"] == 100
    assert [x["terminalId"] for x in paseo("ls")] == [terminal_id]
    assert paseo("ls", "--workspace", created["workspaceId"])[0]["terminalId"] == terminal_id

    prefix = terminal_id[:8]
    run_paseo("terminal", "send-keys", prefix, "echo one two", "Enter", check=True)
    t.wait_line(terminal_id, "one two")
    run_paseo("terminal", "send-keys", "-l", prefix, "echo literal Enter", check=True)
    run_paseo("terminal", "send-keys", prefix, "Enter", check=True)
    t.wait_line(terminal_id, "literal Enter")

    printed = run_paseo("terminal", "capture", prefix, check=True).stdout.splitlines()
    assert "one two" in printed
    last = run_paseo("terminal", "capture", prefix, "-S", "-1", check=True).stdout
    assert last.splitlines() == printed[-1:]
    captured = paseo("capture", prefix, "--start", "0", "--end", "0")
    assert len(captured["lines"]) == 1

    table = run_paseo("terminal", "ls", check=True).stdout
    assert terminal_id[:12] in table
    assert run_paseo("terminal", "ls", "-q", check=True).stdout.split() == [terminal_id]
    assert run_paseo("terminal", "ls", "--no-headers", check=True).stdout.startswith(
        terminal_id[:12]
    )

    killed = paseo("kill", prefix)
    assert killed["state"] == "exited"
    assert paseo("ls") == []
    missing = run_paseo("terminal", "kill", prefix)
    assert missing.returncode == 1
    assert "no terminal" in missing.stderr


def test_attach_types_shows_output_and_detaches_with_ctrl_bracket(
    terminal_daemon: Callable[..., Terminals], paseo_home: Path, tmp_path: Path
) -> None:
    t = terminal_daemon()
    terminal_id = t.create(cwd=str(tmp_path))["terminalId"]
    master, slave = os.openpty()
    # A size of its own: seeing it on the daemon's terminal means attach is in raw mode.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 27, 91, 0, 0))
    attach = subprocess.Popen(
        [sys.executable, "-m", "paseo", "terminal", "attach", terminal_id],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=dict(os.environ, PASEO_HOME=str(paseo_home)),
        start_new_session=True,
    )
    os.close(slave)
    seen = bytearray()

    def read_available() -> None:
        os.set_blocking(master, False)
        try:
            while chunk := os.read(master, 65536):
                seen.extend(chunk)
        except (BlockingIOError, OSError):
            return

    try:
        wait_for(
            lambda: (t.info(terminal_id)["columns"], t.info(terminal_id)["rows"]) == (91, 27),
            30,
            "attach to apply its window size",
        )
        os.write(master, b"echo via-attach\r")
        t.wait_line(terminal_id, "via-attach")

        def echoed() -> bool:
            read_available()
            return seen.count(b"via-attach") >= 2

        wait_for(echoed, 20, "the attached terminal to show the output")

        # Resizing the user's terminal (SIGWINCH) resizes the daemon's.
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        os.kill(attach.pid, signal.SIGWINCH)
        wait_for(
            lambda: (t.info(terminal_id)["columns"], t.info(terminal_id)["rows"]) == (100, 30),
            20,
            "the new window size",
        )
        os.write(master, b"\x1d")
        deadline = time.monotonic() + 20
        while attach.poll() is None and time.monotonic() < deadline:
            read_available()
            time.sleep(0.05)
        assert attach.poll() == 0
        read_available()
        assert b"detached" in seen
        # Detaching leaves the terminal running.
        assert t.info(terminal_id)["state"] == "running"
    finally:
        if attach.poll() is None:
            attach.kill()
        attach.wait(10)
        os.close(master)
