"""Terminal programs are always reaped: on kill, on exit, and after a daemon crash."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import start_daemon, stop_daemon
from helpers.waiting import wait_for
from integration.terminals.support import Terminals, session_alive

# A program that ignores the hang-up a closing terminal sends, with a background child that
# does too: only SIGKILL of the whole session ends it.
STUBBORN = {
    "id": "stubborn",
    "name": "Stubborn",
    "command": "sh",
    "args": ["-c", "trap '' HUP; sleep 1000 & echo started; sleep 1000"],
}


def _records(home: Path) -> list[str]:
    folder = home / "runtime" / "managed-processes"
    return sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []


def test_kill_ends_the_whole_session(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path, paseo_home: Path
) -> None:
    t = terminal_daemon({"daemon": {"terminalProfiles": [STUBBORN]}})
    terminal = t.create(cwd=str(tmp_path), profileId="stubborn")
    t.wait_line(terminal["terminalId"], "started")
    sid = terminal["pid"]
    assert len(session_alive(sid)) >= 2
    assert len(_records(paseo_home)) == 1

    killed = t.call("terminal.kill", {"terminalId": terminal["terminalId"]})["terminal"]
    assert killed["state"] == "exited"
    assert killed["signal"] == signal.SIGKILL
    assert session_alive(sid) == []
    assert t.call("terminal.list")["terminals"] == []
    assert _records(paseo_home) == []


def test_a_program_that_exits_keeps_its_status_and_is_reaped(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path, paseo_home: Path
) -> None:
    t = terminal_daemon()
    terminal = t.create(cwd=str(tmp_path))
    t.type(terminal["terminalId"], "sleep 1000 & exit 3\r")
    wait_for(lambda: t.info(terminal["terminalId"])["state"] == "exited", 20, "the shell to exit")
    info = t.info(terminal["terminalId"])
    assert info["exitCode"] == 3
    assert session_alive(terminal["pid"]) == []
    assert _records(paseo_home) == []
    # Its output stays capturable until it is killed (forgotten).
    assert any("exit 3" in line for line in t.lines(terminal["terminalId"]))


def test_stopping_the_daemon_ends_every_terminal(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path, paseo_home: Path
) -> None:
    t = terminal_daemon({"daemon": {"terminalProfiles": [STUBBORN]}})
    terminal = t.create(cwd=str(tmp_path), profileId="stubborn")
    t.wait_line(terminal["terminalId"], "started")
    t.client.close()
    assert stop_daemon(paseo_home).returncode == 0
    assert session_alive(terminal["pid"]) == []
    assert _records(paseo_home) == []


def test_a_crashed_daemons_terminals_are_reaped_at_the_next_start(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path, paseo_home: Path
) -> None:
    t = terminal_daemon({"daemon": {"terminalProfiles": [STUBBORN]}})
    terminal = t.create(cwd=str(tmp_path), profileId="stubborn")
    t.wait_line(terminal["terminalId"], "started")
    sid = terminal["pid"]
    t.client.close()

    os.kill(t.daemon.pid, signal.SIGKILL)
    wait_for(lambda: not _pid_alive(t.daemon.pid), 20, "the daemon to die")
    # The crash left the session running and its record behind.
    assert session_alive(sid)
    assert len(_records(paseo_home)) == 1

    # The lock of the dead daemon is released with its process; a new daemon reaps.
    start_daemon(paseo_home)
    wait_for(lambda: not session_alive(sid), 20, "the orphaned session to be reaped")
    assert _records(paseo_home) == []


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (not yet reaped by its parent) is dead for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_terminals_beyond_daemon_max_terminals_are_refused_with_the_setting_named(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path, paseo_home: Path, run_paseo: Any
) -> None:
    waiting = {"id": "cat", "name": "Cat", "command": "cat"}
    t = terminal_daemon({"daemon": {"terminalProfiles": [waiting], "maxTerminals": 2}})
    first = t.create(cwd=str(tmp_path))
    t.create(cwd=str(tmp_path))
    refused = run_paseo(
        "terminal", "create", "--cwd", str(tmp_path), env={"PASEO_HOME": str(paseo_home)}
    )
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    assert "daemon.maxTerminals" in refused.stderr, refused.stderr
    assert len(t.call("terminal.list")["terminals"]) == 2
    # Killing one makes room again.
    t.call("terminal.kill", {"terminalId": first["terminalId"]})
    assert t.create(cwd=str(tmp_path))["state"] == "running"
