"""Against the real daemon: ``project.config.read/write`` (paseo.json validated, atomic, guarded
by its revision), ``provider.diagnostic`` (the doctor's checks asked of the daemon) and
``server.restart`` refusing, with nothing stopped, a config.json the daemon could not start
with."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.daemon_rpc import LiveDaemon
from paseo_hookspecs.errors import PaseoError

from paseo.client import SyncClient


def _project(client: SyncClient, root: Path) -> str:
    root.mkdir()
    added = client.call("project.add", {"path": str(root)})
    return str(added["project"]["projectId"])


def test_project_config_is_validated_atomic_and_guarded_by_its_revision(
    daemon: LiveDaemon, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    target = root / "paseo.json"
    with SyncClient(home=daemon.home) as client:
        project_id = _project(client, root)
        empty = client.call("project.config.read", {"projectId": project_id})
        assert (empty["config"], empty["revision"]) == (None, None)

        config = {"worktree": {"setup": "make"}, "scripts": {"web": {"command": "npm start"}}}
        written = client.call(
            "project.config.write",
            {"projectId": project_id, "config": config, "expectedRevision": None},
        )
        assert json.loads(target.read_text()) == config
        stat = target.stat()
        assert written["revision"] == {
            "mtimeMs": stat.st_mtime_ns / 1_000_000,
            "size": stat.st_size,
        }
        assert client.call("project.config.read", {"projectId": project_id})["config"] == config

        with pytest.raises(PaseoError) as stale:
            client.call(
                "project.config.write",
                {"projectId": project_id, "config": {}, "expectedRevision": None},
            )
        assert stale.value.code == "conflict"
        assert stale.value.data["currentRevision"] == written["revision"]

        with pytest.raises(PaseoError) as invalid:
            client.call(
                "project.config.write",
                {
                    "projectId": project_id,
                    "config": {"scripts": {"web": {"command": "x", "port": 70000}}},
                    "expectedRevision": written["revision"],
                },
            )
        assert invalid.value.code == "invalid_params"
        assert "scripts.web.port" in invalid.value.message
        assert json.loads(target.read_text()) == config
        assert sorted(os.listdir(root)) == ["paseo.json"]  # no temporary file left

        target.write_text("{not json")
        with pytest.raises(PaseoError) as broken:
            client.call("project.config.read", {"projectId": project_id})
        assert broken.value.code == "invalid_params"


def test_provider_diagnostic_probes_the_provider_and_its_program(
    daemon_factory: Callable[..., LiveDaemon], tmp_path: Path
) -> None:
    programs = tmp_path / "bin"
    programs.mkdir()
    fake = programs / "claude"
    # Only what the diagnostic asks of the program: its version.
    fake.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    fake.chmod(0o755)
    live = daemon_factory({}, env={"PATH": f"{programs}{os.pathsep}{os.environ['PATH']}"})
    with SyncClient(home=live.home) as client:
        found = client.call("provider.diagnostic", {"providerId": "claude"})
        assert found["providerId"] == "claude"
        assert found["availability"]["status"] in ("ready", "loading", "error", "unavailable")
        assert found["availability"]["checkedAt"]
        assert found["program"] == {
            "command": "claude",
            "path": str(fake),
            "version": "9.9.9 (Claude Code)",
        }
        with pytest.raises(PaseoError) as unknown:
            client.call("provider.diagnostic", {"providerId": "nosuch"})
        assert unknown.value.code == "invalid_params"
        assert "nosuch" in unknown.value.message


def test_restart_is_refused_and_nothing_stops_when_the_config_would_not_start(
    daemon_factory: Callable[..., LiveDaemon],
) -> None:
    live = daemon_factory({})
    (live.home / "config.json").write_text(json.dumps({"daemon": {"listen": 12}}))
    with SyncClient(home=live.home) as client:
        with pytest.raises(PaseoError) as refused:
            client.call("server.restart", {"reason": "test"})
        assert refused.value.code == "invalid_config"
        assert "daemon.listen" in refused.value.message
        # Still the same daemon, answering.
        assert client.call("server.status", {})["pid"] == live.pid
    assert not (live.home / "restart.log").exists()
