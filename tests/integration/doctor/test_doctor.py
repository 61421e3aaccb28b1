"""``paseo doctor`` through the real CLI: a fresh home, a widened secret, a held port, a
config another Paseo refuses, and a running daemon (MCP served, providers probed by it)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

RunPaseo = Callable[..., subprocess.CompletedProcess[str]]

EXPECTED_GROUPS = {"providers", "mcp", "home", "listen", "config", "store", "speech", "git"}


def _doctor(run_paseo: RunPaseo, *extra: str, env: dict[str, str] | None = None) -> Any:
    done = run_paseo("doctor", "-o", "json", *extra, env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert done.returncode == (0 if report["ok"] else 1), done.stderr
    return done.returncode, report


def _by(report: Any, group: str, name: str | None = None) -> list[dict[str, Any]]:
    return [
        check
        for check in report["checks"]
        if check["group"] == group and (name is None or check["name"] == name)
    ]


def test_a_fresh_home_lists_every_group_in_text_and_json(run_paseo: RunPaseo) -> None:
    text = run_paseo("doctor", timeout=120)
    assert "Traceback" not in text.stderr, text.stderr
    for group in EXPECTED_GROUPS:
        assert f"\n{group}\n" in f"\n{text.stdout}", text.stdout
    _code, report = _doctor(run_paseo)
    assert {check["group"] for check in report["checks"]} >= EXPECTED_GROUPS
    for check in report["checks"]:
        assert check["status"] in ("ok", "warn", "fail")
        assert isinstance(check["found"], str)
        assert check["found"]
        if check["status"] != "ok":
            assert check["fix"], check
    assert report["summary"]["fail"] == sum(c["status"] == "fail" for c in report["checks"])
    # Stopped daemon: what needs it says so instead of failing.
    assert _by(report, "mcp")[0]["status"] == "warn"
    assert "not running" in _by(report, "mcp")[0]["found"]


def test_a_keypair_readable_by_others_fails_naming_the_file_and_chmod(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    paseo_home.mkdir(mode=0o700)
    keypair = paseo_home / "daemon-keypair.json"
    keypair.write_text("{}")
    os.chmod(keypair, 0o644)
    code, report = _doctor(run_paseo)
    assert code == 1
    [check] = _by(report, "home", "daemon-keypair.json")
    assert check["status"] == "fail"
    assert str(keypair) in check["found"]
    assert "0644" in check["found"]
    assert check["fix"] == f"chmod 600 {keypair}"
    text = run_paseo("doctor", timeout=120)
    assert text.returncode == 1
    assert f"chmod 600 {keypair}" in text.stdout
    os.chmod(keypair, 0o600)
    _code, fixed = _doctor(run_paseo)
    assert _by(fixed, "home", "daemon-keypair.json")[0]["status"] == "ok"


def test_a_port_held_by_another_process_names_it(run_paseo: RunPaseo) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, report = _doctor(run_paseo, env={"PASEO_LISTEN": f"127.0.0.1:{port}"})
    assert code == 1
    [check] = _by(report, "listen")
    assert check["status"] == "fail"
    assert f"pid {os.getpid()}" in check["found"]
    assert "daemon.listen" in check["fix"]


def test_config_errors_fail_and_keys_the_typescript_paseo_refuses_warn(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    paseo_home.mkdir(mode=0o700)
    config = paseo_home / "config.json"
    config.write_text(json.dumps({"pluginsEnabled": True}))
    _code, report = _doctor(run_paseo)
    assert _by(report, "config", "config.json")[0]["status"] == "ok"
    [foreign] = _by(report, "config", "pluginsEnabled")
    assert foreign["status"] == "warn"
    assert "TypeScript" in foreign["found"]
    config.write_text(json.dumps({"daemon": {"listen": "not an address at all"}}))
    code, broken = _doctor(run_paseo)
    assert code == 1
    [check] = _by(broken, "config", "config.json")
    assert check["status"] == "fail"
    assert "daemon.listen" in check["found"]


def test_quarantined_records_are_reported(paseo_home: Path, run_paseo: RunPaseo) -> None:
    (paseo_home / "quarantine").mkdir(parents=True, mode=0o700)
    (paseo_home / "quarantine" / "server-id.20260101T000000").write_text("x")
    _code, report = _doctor(run_paseo)
    [check] = _by(report, "store", "quarantine")
    assert check["status"] == "warn"
    assert "paseo store quarantine" in check["fix"]


def test_with_the_daemon_running_mcp_is_probed_and_providers_come_from_it(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    env = {"PASEO_HOME": str(paseo_home), "PASEO_LISTEN": "127.0.0.1:0"}
    started = run_paseo("daemon", "start", env=env, timeout=60)
    try:
        assert started.returncode == 0, started.stderr
        _code, report = _doctor(run_paseo, env=env)
        [daemon] = _by(report, "daemon", "daemon")
        assert daemon["status"] == "ok"
        assert "running" in daemon["found"]
        [mcp] = _by(report, "mcp")
        assert mcp["status"] == "ok", mcp
        assert "401" in mcp["found"]
        assert _by(report, "listen")[0]["status"] == "ok"
        assert "listens on" in _by(report, "listen")[0]["found"]
        assert "daemon's probe" in _by(report, "providers", "any provider")[0]["found"]
        assert _by(report, "hub")[0]["status"] in ("ok", "warn")
        for group in EXPECTED_GROUPS:
            assert _by(report, group), group
    finally:
        run_paseo("daemon", "stop", env=env, timeout=60)
    _code, stopped = _doctor(run_paseo, env=env)
    assert "not running" in _by(stopped, "daemon")[0]["found"]


def test_doctor_help_imports_no_check_and_no_plugin() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from paseo.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['doctor', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        # paseo_hookspecs.errors is the CLI's own (its error type); any other paseo_* is a plugin.
        "print(sorted(m for m in sys.modules if m.startswith(('paseo_', 'paseo.doctor',"
        " 'pluggy', 'stevedore')) and m.split('.')[0] != 'paseo_hookspecs'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


def test_doctor_creates_nothing_in_a_home_that_does_not_exist(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    _doctor(run_paseo)
    assert not paseo_home.exists()


def test_with_a_ready_provider_nothing_fails_and_the_exit_status_is_0(
    run_paseo: RunPaseo,
) -> None:
    from helpers.agents_env import agent_binary

    claude = agent_binary("claude")
    env = {"PATH": f"{claude.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    code, report = _doctor(run_paseo, env=env)
    [check] = _by(report, "providers", "claude")
    assert check["status"] == "ok", check
    # The program, where it is and its version, as the registry's probe found it ready.
    assert str(claude) in check["found"]
    assert "Claude Code" in check["found"]
    assert code == 0, [c for c in report["checks"] if c["status"] == "fail"]
    assert report["ok"] is True
    assert report["summary"]["fail"] == 0


def test_a_plugin_that_fails_to_load_is_named_without_a_traceback(
    paseo_home: Path, tmp_path: Path, run_paseo: RunPaseo
) -> None:
    paseo_home.mkdir(mode=0o700)
    missing = tmp_path / "no-such-plugin"
    (paseo_home / "config.json").write_text(
        json.dumps({"plugins": {"broken": {"source": "directory", "path": str(missing)}}})
    )
    for strict in ("1", "0"):
        done = run_paseo("doctor", "-o", "json", env={"PASEO_STRICT_PLUGINS": strict}, timeout=120)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == 1
        failures = [
            check
            for check in json.loads(done.stdout)["checks"]
            if check["group"] == "plugins" and check["status"] == "fail"
        ]
        assert failures, done.stdout
        assert "broken" in failures[0]["found"]
        assert "paseo plugins disable" in failures[0]["fix"]


def test_secrets_in_config_and_agent_env_must_be_0600(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    paseo_home.mkdir(mode=0o700)
    config = paseo_home / "config.json"
    config.write_text(
        json.dumps({"agents": {"providers": {"claude": {"env": {"ANTHROPIC_API_KEY": "sk-x"}}}}})
    )
    os.chmod(config, 0o644)
    (paseo_home / "agent-env").mkdir(mode=0o700)
    env_file = paseo_home / "agent-env" / "agent-1.json"
    env_file.write_text("{}")
    os.chmod(env_file, 0o640)
    code, report = _doctor(run_paseo)
    assert code == 1
    failed = {check["name"]: check for check in _by(report, "home") if check["status"] == "fail"}
    assert failed["config.json"]["fix"] == f"chmod 600 {config}"
    assert failed["agent-1.json"]["fix"] == f"chmod 600 {env_file}"


CHECK_PLUGIN = Path(__file__).resolve().parent / "check_plugin"


def test_a_plugin_contributes_checks_and_one_that_raises_is_named(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    paseo_home.mkdir(mode=0o700)
    (paseo_home / "config.json").write_text(
        json.dumps({"plugins": {"checktest": {"source": "directory", "path": str(CHECK_PLUGIN)}}})
    )
    code, report = _doctor(run_paseo)
    assert code == 1
    [marker] = _by(report, "checktest", "marker")
    assert marker["status"] == "fail"
    assert "daemon running: False" in marker["found"]
    assert marker["fix"] == f"touch {paseo_home / 'checktest-marker'}"
    [broken] = _by(report, "checktest-broken")
    assert broken["status"] == "fail"
    assert "checktest" in broken["found"]
    assert "broke on purpose" in broken["found"]
    # The built-in plugins' checks are still there.
    assert _by(report, "mcp")
    assert _by(report, "hub")
    (paseo_home / "checktest-marker").touch()
    _code, fixed = _doctor(run_paseo)
    assert _by(fixed, "checktest", "marker")[0]["status"] == "ok"


def test_the_hub_record_holds_a_credential_and_must_be_0600(
    paseo_home: Path, run_paseo: RunPaseo
) -> None:
    paseo_home.mkdir(mode=0o700)
    record = paseo_home / "hub-relationship.json"
    record.write_text(
        json.dumps({"state": "active", "relationship": {"hubOrigin": "https://hub.example"}})
    )
    os.chmod(record, 0o644)
    code, report = _doctor(run_paseo)
    assert code == 1
    [check] = _by(report, "hub", "hub-relationship.json")
    assert check["status"] == "fail"
    assert check["fix"] == f"chmod 600 {record}"
    [state] = _by(report, "hub", "hub relationship")
    assert "https://hub.example" in state["found"]
