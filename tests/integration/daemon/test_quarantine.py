"""Files the daemon cannot use are kept in quarantine and reported, never silently replaced."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from helpers.foreground import foreground_daemon as run_foreground


def _start_detached(
    run_paseo: Callable[..., subprocess.CompletedProcess[str]], home: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    env = {"PASEO_HOME": str(home), "PASEO_LISTEN": "127.0.0.1:0"}
    return run_paseo("daemon", "start", env=env, timeout=60), env


def test_a_server_id_that_is_not_text_is_quarantined_and_reported(
    paseo_home: Path, run_paseo
) -> None:
    paseo_home.mkdir()
    (paseo_home / "server-id").write_bytes(b"srv_\xff\xfe\x00garbage")
    started, env = _start_detached(run_paseo, paseo_home)
    try:
        assert started.returncode == 0, started.stderr
        assert "Traceback" not in started.stderr
        assert "in quarantine" in started.stderr
        assert (paseo_home / "server-id").read_text().startswith("srv_")
        listed = json.loads(
            run_paseo("store", "quarantine", "ls", "-o", "json", env=env, check=True).stdout
        )
        assert [row["original"] for row in listed] == [str(paseo_home / "server-id")]
        assert Path(listed[0]["path"]).read_bytes() == b"srv_\xff\xfe\x00garbage"
        status = json.loads(run_paseo("daemon", "status", "-o", "json", env=env).stdout)
        assert status["quarantined"] == 1
        refused = run_paseo("store", "quarantine", "restore", listed[0]["path"], env=env)
        assert refused.returncode == 1
        assert "daemon is running" in refused.stderr
    finally:
        run_paseo("daemon", "stop", env=env, timeout=60)
    restored = run_paseo("store", "quarantine", "restore", listed[0]["path"], env=env)
    assert restored.returncode == 1
    assert "--force" in restored.stderr
    run_paseo(
        "store", "quarantine", "restore", listed[0]["path"], "--force", env=env, check=True
    )
    assert (paseo_home / "server-id").read_bytes() == b"srv_\xff\xfe\x00garbage"
    assert json.loads(
        run_paseo("store", "quarantine", "ls", "-o", "json", env=env, check=True).stdout
    ) == []


def test_an_unreadable_keypair_is_kept_in_quarantine_before_a_new_one_is_made(
    paseo_home: Path, run_paseo
) -> None:
    paseo_home.mkdir()
    fd = os.open(paseo_home / "daemon-keypair.json", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"not json")
    os.close(fd)
    with run_foreground(paseo_home):
        keypair = json.loads((paseo_home / "daemon-keypair.json").read_text())
        assert keypair["v"] == 2
    kept = list((paseo_home / "quarantine").glob("daemon-keypair.json.*"))
    assert len(kept) == 1
    assert kept[0].read_bytes() == b"not json"
    assert stat.S_IMODE(kept[0].stat().st_mode) == 0o600
    removed = run_paseo(
        "store", "quarantine", "rm", str(kept[0]), env={"PASEO_HOME": str(paseo_home)}
    )
    assert removed.returncode == 0, removed.stderr
    assert not kept[0].exists()


def _git_repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    subprocess.run(
        [
            "git",
            "-C",
            str(path),
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
        check=True,
        timeout=30,
    )
    return path


def _ls(
    run_paseo: Callable[..., subprocess.CompletedProcess[str]],
    env: dict[str, str],
    what: str,
    key: str,
) -> dict[str, str]:
    rows = json.loads(run_paseo(what, "ls", "-o", "json", env=env, check=True).stdout)
    return {row[key]: row["rootPath" if what == "project" else "cwd"] for row in rows}


def test_workspaces_stay_listed_when_their_projects_file_is_quarantined(
    paseo_home: Path, tmp_path: Path, run_paseo
) -> None:
    repo = _git_repo(tmp_path / "repo")
    plain = tmp_path / "plain"
    plain.mkdir()
    started, env = _start_detached(run_paseo, paseo_home)
    assert started.returncode == 0, started.stderr
    try:
        for path in (repo, plain):
            run_paseo("workspace", "open", str(path), env=env, check=True)
        projects = _ls(run_paseo, env, "project", "projectId")
        workspaces = _ls(run_paseo, env, "workspace", "workspaceId")
    finally:
        run_paseo("daemon", "stop", env=env, timeout=60, check=True)
    assert (
        sorted(projects.values()) == sorted(workspaces.values()) == sorted([str(repo), str(plain)])
    )
    (paseo_home / "projects" / "projects.json").write_text('{"not": "an array"}\n')

    started, env = _start_detached(run_paseo, paseo_home)
    try:
        assert started.returncode == 0, started.stderr
        assert "quarantine" in started.stderr
        assert _ls(run_paseo, env, "workspace", "workspaceId") == workspaces
        assert _ls(run_paseo, env, "project", "projectId") == projects
        # The next write keeps every record: a new project joins the recovered ones.
        third = tmp_path / "third"
        third.mkdir()
        run_paseo("workspace", "open", str(third), env=env, check=True)
    finally:
        run_paseo("daemon", "stop", env=env, timeout=60, check=True)

    started, env = _start_detached(run_paseo, paseo_home)
    try:
        assert started.returncode == 0, started.stderr
        assert set(_ls(run_paseo, env, "workspace", "workspaceId").values()) == {
            str(repo),
            str(plain),
            str(third),
        }
        assert set(_ls(run_paseo, env, "project", "projectId")) >= set(projects)
        kept = json.loads(
            run_paseo("store", "quarantine", "ls", "-o", "json", env=env, check=True).stdout
        )
        assert [Path(row["path"]).read_text() for row in kept] == ['{"not": "an array"}\n']
    finally:
        run_paseo("daemon", "stop", env=env, timeout=60)
