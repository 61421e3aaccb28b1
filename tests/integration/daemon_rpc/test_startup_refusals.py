"""Against the real daemon process: what the next start would refuse is refused by every write
path without touching ``config.json``, and a daemon that cannot start says why in one line
(detached or in the foreground), never with a traceback; the log keeps the traceback."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from paseo_hookspecs.errors import PaseoError

from paseo.client import SyncClient

RunPaseo = Callable[..., subprocess.CompletedProcess[str]]
ENV = {"PASEO_LISTEN": "127.0.0.1:0"}


def _nested(depth: int) -> dict[str, Any]:
    document: dict[str, Any] = {"x": 1}
    for _ in range(depth - 1):
        document = {"x": document}
    return document


@pytest.mark.parametrize(
    "patch",
    [
        {"plugins": {"websocket": {"settings": {"maxConnections": 0}}}},
        {"plugins": {"websocket": {"settings": {"noSuchLimit": 1}}}},
        {"plugins": {"websocket": {"settings": {"maxConnections": "many"}}}},
        {"storage": {"driver": "mongo"}},
        {"plugins": {"acme": {"settings": _nested(600)}}},
    ],
    ids=["zero-connections", "unknown-key", "string-for-number", "mongo", "600-deep"],
)
def test_config_patch_refuses_what_start_up_refuses(
    daemon_factory: Callable[..., LiveDaemon], patch: dict[str, Any]
) -> None:
    live = daemon_factory({"daemon": {"appendSystemPrompt": "kept"}})
    before = (live.home / "config.json").read_bytes()
    with SyncClient(home=live.home) as client, pytest.raises(PaseoError) as info:
        client.config_patch(patch)
    assert info.value.code == "invalid_config"
    assert (live.home / "config.json").read_bytes() == before
    with SyncClient(home=live.home) as client:
        assert client.status().pid == live.pid


def test_reload_and_restart_refuse_a_file_start_up_would_refuse(
    daemon_factory: Callable[..., LiveDaemon], run_paseo: RunPaseo
) -> None:
    live = daemon_factory()
    env = {**ENV, "PASEO_HOME": str(live.home)}
    bad = {"plugins": {"websocket": {"settings": {"maxConnections": 0}}}}
    (live.home / "config.json").write_text(json.dumps(bad))
    reload = run_paseo("reload", env=env)
    assert reload.returncode == 1
    assert "plugins.websocket.settings.maxConnections" in reload.stderr
    restart = run_paseo("daemon", "restart", env=env)
    assert restart.returncode != 0
    assert "the running daemon keeps running" in restart.stderr
    assert "Traceback" not in restart.stderr + reload.stderr
    status = json.loads(run_paseo("daemon", "status", "-o", "json", env=env).stdout)
    assert status["pid"] == live.pid
    validate = run_paseo("config", "validate", env=env)
    assert validate.returncode == 1
    assert "plugins.websocket.settings.maxConnections" in validate.stdout


def _assert_refused(result: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for text in expected:
        assert text in result.stderr


def _start_both_ways(run_paseo: RunPaseo, home: Path) -> list[subprocess.CompletedProcess[str]]:
    env = {**ENV, "PASEO_HOME": str(home)}
    return [
        run_paseo("daemon", "start", env=env),
        run_paseo("daemon", "start", "--foreground", env=env),
    ]


def test_a_config_nested_5000_deep_stops_start_in_one_line(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    paseo_home.mkdir()
    text = '{"a":' * 5000 + "1" + "}" * 5000
    (paseo_home / "config.json").write_text(text)
    for result in _start_both_ways(run_paseo, paseo_home):
        _assert_refused(result, "nested deeper than 64 levels")
    assert (paseo_home / "config.json").read_text() == text


@pytest.mark.parametrize(
    ("make_home", "expected"),
    [
        (lambda tmp: _file(tmp / "a-file") / "home", "a part of that path is a file"),
        (lambda tmp: Path("/proc/paseo-home"), "cannot use the Paseo home /proc/paseo-home"),
    ],
    ids=["parent-is-a-file", "under-proc"],
)
def test_a_home_that_cannot_exist_is_refused_in_one_line(
    tmp_path: Path, run_paseo: RunPaseo, make_home: Callable[[Path], Path], expected: str
) -> None:
    home = make_home(tmp_path)
    for result in _start_both_ways(run_paseo, home):
        _assert_refused(result, expected)


def _file(path: Path) -> Path:
    path.write_text("not a directory\n")
    return path


def test_an_unexpected_failure_is_one_line_and_its_traceback_is_in_the_log(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    (paseo_home / "server-id").mkdir(parents=True)
    for result in _start_both_ways(run_paseo, paseo_home):
        _assert_refused(result, "Is a directory", str(paseo_home / "server-id"))
    log = (paseo_home / "daemon.log").read_text()
    assert "the daemon stopped on an unexpected error" in log
    assert "Traceback (most recent call last)" in log
    assert "IsADirectoryError" in log


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted for this test (the test machine runs as root)."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], check=True, timeout=30
    )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True, timeout=30)


def test_a_full_disk_is_refused_in_one_line(small_tmpfs: Path, run_paseo: RunPaseo) -> None:
    home = small_tmpfs / "home"
    home.mkdir()
    with pytest.raises(OSError, match="No space left"):
        _fill(small_tmpfs / "filler")
    for result in _start_both_ways(run_paseo, home):
        _assert_refused(result, "No space left on device", "free some disk space")


def _fill(path: Path) -> None:
    """Write to ``path`` until the file system is full (raises its ``OSError``)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    finally:
        os.close(fd)


def test_a_read_only_home_is_refused_in_one_line(small_tmpfs: Path, run_paseo: RunPaseo) -> None:
    home = small_tmpfs / "home"
    home.mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True, timeout=30)
    for result in _start_both_ways(run_paseo, home):
        _assert_refused(result, "Read-only file system", "choose a writable home")
