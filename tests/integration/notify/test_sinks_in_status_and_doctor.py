"""``daemon.notifications`` through the real daemon and CLI: validated when written as start-up
validates it, a failing sink counted in ``paseo daemon status`` and warned by ``paseo doctor``."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from integration.agents.conftest import scripted_config

Run = Callable[..., subprocess.CompletedProcess[str]]


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _status(run: Run, home: Path) -> dict[str, Any]:
    done = run("daemon", "status", "-o", "json", env={"PASEO_HOME": str(home)}, timeout=30)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_bad_sink_is_refused_when_written_and_changes_nothing(
    run_paseo: Run, paseo_home: Path
) -> None:
    env = {"PASEO_HOME": str(paseo_home)}
    bad = json.dumps([{"type": "webhook", "url": "ftp://example.invalid/hook"}])
    refused = run_paseo("config", "set", "daemon.notifications", bad, env=env)
    assert refused.returncode != 0
    assert "daemon.notifications[0]" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (paseo_home / "config.json").exists() or "ftp://" not in (
        paseo_home / "config.json"
    ).read_text()
    unknown = json.dumps([{"type": "email", "to": "me"}])
    assert run_paseo("config", "set", "daemon.notifications", unknown, env=env).returncode != 0
    good = json.dumps([{"type": "command", "argv": ["true"], "events": ["budget"]}])
    run_paseo("config", "set", "daemon.notifications", good, env=env, check=True)
    validated = run_paseo("config", "validate", env=env)
    assert validated.returncode == 0, validated.stderr


def test_a_failing_sink_shows_in_daemon_status_and_doctor(
    agent_daemon_factory: Callable[..., LiveDaemon], run_paseo: Run, workdir: Path
) -> None:
    sinks = [
        {
            "type": "webhook",
            "name": "nobody-home",
            "url": f"http://127.0.0.1:{_closed_port()}/hook",
            "retries": 0,
            "timeout": 2,
        },
        {"type": "command", "name": "fine", "argv": ["true"]},
    ]
    home = agent_daemon_factory(scripted_config({"daemon": {"notifications": sinks}})).home
    env = {"PASEO_HOME": str(home)}
    before = _status(run_paseo, home)["sections"]["notify"]
    assert (before["state"], before["headline"]) == ("ok", "2 sink(s), 0 sent")

    run = ["run", "--provider", "scripted", "--cwd", str(workdir), "--wait-timeout", "30s"]
    run_paseo(*run, "--title", "notified", "hello", env=env, timeout=60, check=True)

    def failed() -> dict[str, Any] | None:
        section = _status(run_paseo, home)["sections"]["notify"]
        return section if section["state"] == "warn" else None

    section = wait_for(failed, timeout=30, what="the webhook sink's failure in daemon status")
    assert "nobody-home failing: could not connect" in section["headline"]
    by_name = {sink["name"]: sink for sink in section["details"]["sinks"]}
    assert by_name["nobody-home"]["failed"] == 1
    assert wait_for(
        lambda: _status(run_paseo, home)["sections"]["notify"]["details"]["sinks"][1]["sent"],
        timeout=30,
        what="the command sink's delivery",
    )
    table = run_paseo("daemon", "status", env=env, timeout=30)
    assert "warn: 1 of 2 sink(s) nobody-home failing" in table.stdout, table.stdout

    doctor = run_paseo("doctor", "-o", "json", env=env, timeout=120)
    assert "Traceback" not in doctor.stderr, doctor.stderr
    checks = [c for c in json.loads(doctor.stdout)["checks"] if c["group"] == "notifications"]
    by_check = {c["name"]: c for c in checks}
    assert by_check["sink nobody-home"]["status"] == "warn"
    assert "could not connect" in by_check["sink nobody-home"]["found"]
    assert by_check["sink nobody-home"]["fix"]
    assert by_check["sink fine"]["status"] == "ok"
