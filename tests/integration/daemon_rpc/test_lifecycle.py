"""Daemon CLI over the wire: status, reload, stop."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
from helpers.daemon_rpc import LiveDaemon


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_status_reports_a_running_daemon(daemon: LiveDaemon, run_paseo) -> None:
    result = run_paseo("daemon", "status", "-o", "json", check=True)
    data = json.loads(result.stdout)
    assert data["running"] is True
    assert data["pid"] == daemon.pid
    assert data["listen"] == [daemon.url]
    assert data["version"]
    assert data["uptimeSeconds"] >= 0
    assert "websocket" in data["plugins"]["loaded"]
    assert data["plugins"]["failed"] == []
    assert data["counts"]["connections"] == 0
    table = run_paseo("daemon", "status", check=True).stdout
    assert "pid:" in table
    assert str(daemon.pid) in table


def test_status_of_a_stopped_daemon_says_how_to_start_it(paseo_home: Path, run_paseo) -> None:
    result = run_paseo("daemon", "status")
    assert result.returncode == 3
    assert "paseo daemon start" in result.stderr
    assert not paseo_home.exists()  # asking never creates the home


def test_reload_applies_a_runtime_safe_change_and_names_a_startup_only_one(
    daemon: LiveDaemon, run_paseo
) -> None:
    run_paseo("config", "set", "daemon.git.maxProcessConcurrency", "3", check=True)
    run_paseo("config", "set", "storage.driver", "sqlite", check=True)
    result = run_paseo("reload", "-o", "json", check=True)
    outcome = json.loads(result.stdout)
    assert outcome["applied"] == ["daemon.git.maxProcessConcurrency"]
    assert outcome["restartRequired"] == ["storage.driver"]
    # Reloading again applies nothing new but still names the pending restart.
    table = run_paseo("daemon", "reload", check=True).stdout
    assert "applied" not in table
    assert "restart required: storage.driver" in table
    status = json.loads(run_paseo("daemon", "status", "-o", "json", check=True).stdout)
    assert status["storageDriver"] == "json"  # still the store it runs with


def test_reload_applies_new_hostnames_live(daemon: LiveDaemon, run_paseo) -> None:
    import urllib.error
    import urllib.request

    def health_with_host(host: str) -> int:
        request = urllib.request.Request(f"{daemon.http}/api/health", headers={"Host": host})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    assert health_with_host("box.example") == 403
    run_paseo("config", "set", "daemon.hostnames", '["box.example"]', check=True)
    run_paseo("reload", check=True)
    assert health_with_host("box.example") == 200


def test_stop_leaves_no_process_lock_or_credential(
    daemon: LiveDaemon, paseo_home: Path, run_paseo
) -> None:
    result = run_paseo("daemon", "stop", check=True)
    assert "stopped" in result.stdout
    assert _gone(daemon.pid)
    for name in ("paseo.pid", "paseo.pid.lock", "local-credential"):
        assert not (paseo_home / name).exists(), name
    assert run_paseo("daemon", "status").returncode == 3
    assert "not running" in run_paseo("daemon", "stop", check=True).stdout


def test_start_reports_where_it_listens_and_refuses_a_second_start(
    daemon: LiveDaemon, run_paseo
) -> None:
    result = run_paseo("daemon", "start", env={"PASEO_LISTEN": "127.0.0.1:0"})
    assert result.returncode == 1
    assert "already running" in result.stderr


def test_unix_socket_listener(daemon_factory, paseo_home: Path, run_paseo, tmp_path: Path) -> None:
    socket_path = tmp_path / "sock" / "paseo.sock"
    result = run_paseo(
        "daemon", "start", "--listen", f"unix://{socket_path}", "-o", "json", check=True
    )
    report = json.loads(result.stdout)
    try:
        assert report["listen"] == [f"unix://{socket_path}"]
        status = json.loads(run_paseo("daemon", "status", "-o", "json", check=True).stdout)
        assert status["pid"] == report["pid"]
        assert status["counts"]["connections"] == 0
        assert oct(socket_path.stat().st_mode & 0o777) == oct(0o600)
    finally:
        run_paseo("daemon", "stop", "--force", check=True)
    assert not socket_path.exists()


def test_restart_with_an_invalid_config_keeps_the_running_daemon(
    daemon: LiveDaemon, run_paseo, paseo_home: Path
) -> None:
    config = paseo_home / "config.json"
    config.write_text('{"daemon": {"listen": 12}}', encoding="utf-8")
    result = run_paseo("daemon", "restart")
    assert result.returncode == 1
    assert "not restarting" in result.stderr
    assert "daemon.listen" in result.stderr
    assert not _gone(daemon.pid)
    status = json.loads(run_paseo("daemon", "status", "-o", "json", check=True).stdout)
    assert status["pid"] == daemon.pid
