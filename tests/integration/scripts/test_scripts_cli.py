"""``paseo script`` against a real daemon: plain scripts, supervised services, crash reaping,
and a malformed ``paseo.json``."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon
from helpers.waiting import wait_for
from integration.scripts.conftest import git


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def make_worktree(run_paseo: Any, repo: Path) -> dict[str, Any]:
    run_paseo("project", "add", str(repo), check=True)
    result = run_paseo(
        "worktree", "create", "--cwd", str(repo), "--branch", "feat/x", "-o", "json", check=True
    )
    workspace: dict[str, Any] = json.loads(result.stdout)["workspace"]
    return workspace


def scripts(run_paseo: Any, cwd: str) -> dict[str, dict[str, Any]]:
    result = run_paseo("script", "ls", "--cwd", cwd, "-o", "json", check=True)
    return {s["name"]: s for s in json.loads(result.stdout)}


def get(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ping", timeout=10) as response:
        body: bytes = response.read()
        return body.decode()


def test_plain_script_runs_in_the_worktree_with_its_variables_and_status(
    daemon: LiveDaemon, repo: Path, run_paseo: Any
) -> None:
    workspace = make_worktree(run_paseo, repo)
    cwd = workspace["cwd"]
    assert (Path(cwd) / "setup-ran.txt").read_text() == "set-up\n"
    listed = scripts(run_paseo, cwd)
    assert listed["hello"]["type"] == "script"
    assert listed["hello"]["status"] is None
    assert listed["api"]["type"] == "service"
    assert listed["api"]["status"] == "stopped"
    assert listed["api"]["port"] != listed["web-app"]["port"]
    table = run_paseo("script", "ls", "--cwd", cwd, check=True).stdout
    assert "web-app" in table
    assert "service" in table

    ran = run_paseo("script", "run", "hello", "--cwd", cwd)
    assert ran.returncode == 3
    assert ran.stdout.strip() == f"hello from feat/x in {os.path.realpath(cwd)}"

    missing = run_paseo("script", "run", "nope", "--cwd", cwd)
    assert missing.returncode == 1
    assert "no script 'nope'" in missing.stderr
    assert "hello" in missing.stderr
    service = run_paseo("script", "run", "api", "--cwd", cwd)
    assert service.returncode == 1
    assert "paseo script start" in service.stderr


def test_services_start_see_each_other_stop_and_are_reaped_after_a_crash(
    daemon: LiveDaemon, repo: Path, run_paseo: Any, paseo_home: Path
) -> None:
    cwd = make_worktree(run_paseo, repo)["cwd"]
    for name in ("api", "web-app"):
        started = json.loads(
            run_paseo("script", "start", name, "--cwd", cwd, "-o", "json", check=True).stdout
        )
        assert started[0]["status"] in ("starting", "running")

    def both_running() -> dict[str, dict[str, Any]] | None:
        listed = scripts(run_paseo, cwd)
        ok = all(listed[n]["status"] == "running" for n in ("api", "web-app"))
        return listed if ok else None

    listed = wait_for(both_running, 30, "both services to run")
    api, web = listed["api"], listed["web-app"]
    assert get(api["port"]) == "api /ping"
    assert get(web["port"]) == "web /ping"
    assert api["url"] == f"http://127.0.0.1:{api['port']}"

    env = json.loads((Path(cwd) / "web-env.json").read_text())
    assert env["PASEO_PORT"] == str(web["port"])
    assert env["PASEO_URL"] == web["url"]
    assert env["PASEO_SERVICE_API_PORT"] == str(api["port"])
    assert env["PASEO_SERVICE_WEB_APP_URL"] == web["url"]
    assert env["PASEO_BRANCH_NAME"] == "feat/x"
    assert env["PASEO_SOURCE_CHECKOUT_PATH"] == str(repo)

    logs = run_paseo("script", "logs", "api", "--cwd", cwd, check=True)
    assert f"serving {api['port']}" in logs.stdout

    stopped = json.loads(
        run_paseo("script", "stop", "api", "--cwd", cwd, "-o", "json", check=True).stdout
    )
    assert stopped[0]["status"] == "exited"
    assert not alive(api["pid"])
    assert scripts(run_paseo, cwd)["web-app"]["status"] == "running"

    # The daemon dies without stopping web-app; the next daemon reaps it.
    os.kill(daemon.pid, signal.SIGKILL)
    wait_for(lambda: not alive(daemon.pid), 20, "the daemon to die")
    assert alive(web["pid"])
    live = start_daemon(paseo_home)
    try:
        wait_for(lambda: not alive(web["pid"]), 20, "the orphaned service to be reaped")
        restarted = scripts(run_paseo, cwd)
        assert restarted["web-app"]["status"] == "stopped"
    finally:
        kill_leftover(live.pid)
    kill_leftover(web["pid"])


def test_daemon_stop_stops_services(
    daemon: LiveDaemon, repo: Path, run_paseo: Any, paseo_home: Path
) -> None:
    cwd = make_worktree(run_paseo, repo)["cwd"]
    run_paseo("script", "start", "api", "--cwd", cwd, check=True)
    api = wait_for(
        lambda: (s := scripts(run_paseo, cwd)["api"])["status"] == "running" and s,
        30,
        "api to run",
    )
    run_paseo("daemon", "stop", "--timeout", "20", check=True)
    assert not alive(api["pid"])


def test_a_malformed_paseo_json_names_the_file_and_key_and_runs_nothing(
    daemon: LiveDaemon, repo: Path, run_paseo: Any
) -> None:
    config = json.loads((repo / "paseo.json").read_text())
    config["scripts"]["api"]["port"] = "eighty"
    (repo / "paseo.json").write_text(json.dumps(config))
    for args in (("script", "ls"), ("script", "start", "api"), ("script", "run", "hello")):
        result = run_paseo(*args, "--cwd", str(repo))
        assert result.returncode == 1, result
        assert str(repo / "paseo.json") in result.stderr
        assert "scripts.api.port" in result.stderr
        assert "Traceback" not in result.stderr

    # Committed, it stops a worktree's creation before its setup runs.
    git(repo, "commit", "-q", "-am", "bad port")
    created = run_paseo("worktree", "create", "--cwd", str(repo), "--branch", "bad")
    assert created.returncode == 1
    assert "paseo.json (at " in created.stderr
    assert "scripts.api.port" in created.stderr
    assert json.loads(run_paseo("worktree", "ls", "-o", "json", check=True).stdout) == []


def test_archiving_a_worktree_stops_its_services(
    daemon: LiveDaemon, repo: Path, run_paseo: Any
) -> None:
    workspace = make_worktree(run_paseo, repo)
    cwd = workspace["cwd"]
    run_paseo("script", "start", "api", "--cwd", cwd, check=True)
    api = wait_for(
        lambda: (s := scripts(run_paseo, cwd)["api"])["status"] == "running" and s,
        30,
        "api to run",
    )
    run_paseo("worktree", "archive", workspace["workspaceId"], "--force", check=True)
    assert not alive(api["pid"])
    assert not Path(cwd).exists()


def test_a_failing_service_reports_its_exit_code_and_worktrees_get_distinct_ports(
    daemon: LiveDaemon, repo: Path, run_paseo: Any
) -> None:
    first = make_worktree(run_paseo, repo)["cwd"]
    second = json.loads(
        run_paseo(
            "worktree", "create", "--cwd", str(repo), "--branch", "other", "-o", "json",
            check=True,
        ).stdout
    )["workspace"]["cwd"]  # fmt: skip
    run_paseo("script", "start", "broken", "--cwd", first, check=True)
    broken = wait_for(
        lambda: (s := scripts(run_paseo, first)["broken"])["status"] == "failed" and s,
        30,
        "broken to fail",
    )
    assert broken["exitCode"] == 4
    assert broken["pid"] is None
    assert run_paseo("script", "logs", "broken", "--cwd", first, check=True).stdout == "oops\n"

    for cwd in (first, second):
        run_paseo("script", "start", "api", "--cwd", cwd, check=True)
    ports = []
    for cwd in (first, second):
        api = wait_for(
            lambda cwd=cwd: (s := scripts(run_paseo, cwd)["api"])["status"] == "running" and s,
            30,
            "api to run",
        )
        ports.append(api["port"])
        assert get(api["port"]) == "api /ping"
    assert ports[0] != ports[1]
    for cwd in (first, second):
        run_paseo("script", "stop", "api", "--cwd", cwd, check=True)
