"""One daemon per state root; meta files and their modes."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.foreground import foreground_daemon as run_foreground
from helpers.foreground import spawn_foreground, stop_foreground
from helpers.waiting import wait_for


def _snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``root`` with its size, mtime and content."""
    result = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            result[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns, path.read_bytes())
    return result


@pytest.fixture
def foreground_daemon(paseo_home: Path) -> Iterator[subprocess.Popen[str]]:
    with run_foreground(paseo_home) as process:
        wait_for(
            lambda: "running" in (process.stdout.readline() if process.stdout else ""),
            what="the ready line",
        )
        yield process


def test_foreground_daemon_writes_meta_files_with_private_modes(
    foreground_daemon: subprocess.Popen[str], paseo_home: Path
) -> None:
    for name in ("local-credential", "daemon-keypair.json"):
        mode = stat.S_IMODE((paseo_home / name).stat().st_mode)
        assert mode == 0o600, f"{name} has mode {oct(mode)}"
    server_id = (paseo_home / "server-id").read_text().strip()
    assert server_id.startswith("srv_")
    keypair = json.loads((paseo_home / "daemon-keypair.json").read_text())
    assert keypair["v"] == 2
    assert set(keypair) == {"v", "publicKeyB64", "secretKeyB64"}
    pid = json.loads((paseo_home / "paseo.pid").read_text())
    assert pid["pid"] == foreground_daemon.pid
    assert "startedAt" in pid


def test_second_daemon_on_same_home_fails_before_writing(
    foreground_daemon: subprocess.Popen[str], paseo_home: Path, run_paseo
) -> None:
    # The running daemon's own start-up writes come first (its first trash sweep marks the
    # home after "ready"), so only the second daemon can change what is compared.
    wait_for(
        lambda: (
            (paseo_home / "trash" / "sweep.json").exists() and not any(paseo_home.rglob("*.tmp"))
        ),
        what="the running daemon's start-up writes",
    )
    before = _snapshot(paseo_home)
    result = run_paseo("daemon", "start", "--foreground", timeout=30)
    assert result.returncode != 0
    assert "already owns" in result.stderr
    assert str(foreground_daemon.pid) in result.stderr
    assert _snapshot(paseo_home) == before
    assert foreground_daemon.poll() is None


def test_sigterm_cleans_up_credential_pid_and_lock(
    foreground_daemon: subprocess.Popen[str], paseo_home: Path
) -> None:
    server_id = (paseo_home / "server-id").read_text()
    foreground_daemon.send_signal(signal.SIGTERM)
    assert foreground_daemon.wait(timeout=20) == 0
    assert not (paseo_home / "local-credential").exists()
    assert not (paseo_home / "paseo.pid").exists()
    assert not (paseo_home / "paseo.pid.lock").exists()
    assert (paseo_home / "server-id").read_text() == server_id


def test_stale_pid_file_from_a_killed_daemon_is_replaced(paseo_home: Path, run_paseo) -> None:
    process = spawn_foreground()
    wait_for((paseo_home / "local-credential").exists, what="first daemon")
    first_server_id = (paseo_home / "server-id").read_text()
    process.kill()
    process.wait(timeout=10)
    assert (paseo_home / "paseo.pid").exists()
    second = spawn_foreground()
    try:
        wait_for(
            lambda: (
                json.loads((paseo_home / "paseo.pid").read_text() or "{}").get("pid") == second.pid
            ),
            what="the second daemon's pid file",
        )
        assert (paseo_home / "server-id").read_text() == first_server_id
        wait_for(
            lambda: "stale paseo.pid" in (paseo_home / "daemon.log").read_text(),
            what="the stale-pid warning",
        )
    finally:
        stop_foreground(second)


def test_unreadable_keypair_is_regenerated(paseo_home: Path) -> None:
    paseo_home.mkdir()
    (paseo_home / "daemon-keypair.json").write_text("not json")
    with run_foreground(paseo_home):
        keypair = json.loads((paseo_home / "daemon-keypair.json").read_text())
        assert keypair["v"] == 2
        assert stat.S_IMODE((paseo_home / "daemon-keypair.json").stat().st_mode) == 0o600


def test_invalid_config_refuses_to_start_and_is_not_rewritten(paseo_home: Path, run_paseo) -> None:
    paseo_home.mkdir()
    bad = '{"daemon": {"git": {"maxProcessConcurrency": "lots"}}}\n'
    (paseo_home / "config.json").write_text(bad)
    result = run_paseo("daemon", "start", "--foreground", timeout=30)
    assert result.returncode != 0
    assert "config.json" in result.stderr
    assert "daemon.git.maxProcessConcurrency" in result.stderr
    assert (paseo_home / "config.json").read_text() == bad
    assert not (paseo_home / "local-credential").exists()


def test_a_killed_daemons_credential_is_removed_by_the_next_start(
    paseo_home: Path, run_paseo
) -> None:
    process = spawn_foreground()
    wait_for((paseo_home / "local-credential").exists, what="first daemon")
    process.kill()
    process.wait(timeout=10)
    assert (paseo_home / "local-credential").exists()
    # The next start fails (a config.json it refuses) yet leaves no dead daemon's secret.
    (paseo_home / "config.json").write_text('{"daemon": {"git": {"maxProcessConcurrency": "x"}}}')
    result = run_paseo("daemon", "start", "--foreground", timeout=30)
    assert result.returncode != 0
    assert "config.json" in result.stderr
    assert not (paseo_home / "local-credential").exists()
