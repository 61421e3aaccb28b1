"""The loops plugin on a real daemon keeps its loops in the configured store driver, through
the contract's plugin records: a home's earlier ``loops/loops.json`` is moved in at start
(and kept as ``loops.json.migrated``), and loops outlive a restart, under both drivers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, stop_daemon
from helpers.waiting import wait_for
from integration.agents.conftest import scripted_config

from paseo.client import SyncClient


def _legacy_loop(cwd: Path) -> dict[str, Any]:
    """A finished loop as an earlier version wrote it in loops.json."""
    return {
        "id": "0123abcd",
        "name": "from-before",
        "prompt": "an old loop",
        "cwd": str(cwd),
        "provider": "scripted",
        "model": None,
        "workerProvider": None,
        "workerModel": None,
        "verifierProvider": None,
        "verifierModel": None,
        "verifyPrompt": None,
        "verifyChecks": ["true"],
        "archive": False,
        "sleepMs": 0,
        "maxIterations": 1,
        "maxTimeMs": None,
        "status": "succeeded",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:05.000Z",
        "startedAt": "2026-01-01T00:00:00.000Z",
        "completedAt": "2026-01-01T00:00:05.000Z",
        "stopRequestedAt": None,
        "iterations": [],
        "logs": [],
        "nextLogSeq": 1,
        "activeIteration": None,
        "activeWorkerAgentId": None,
        "activeVerifierAgentId": None,
    }


def _loops(home: Path) -> dict[str, dict[str, Any]]:
    with SyncClient(home=home, client_type="sdk") as client:
        listed = client.call("loop.list", {})["loops"]
        return {i["id"]: client.call("loop.inspect", {"id": i["id"]})["loop"] for i in listed}


@pytest.mark.parametrize("driver", ["json", "sqlite"])
def test_loops_live_in_the_configured_store_and_outlive_a_restart(
    agent_daemon_factory: Callable[..., LiveDaemon], paseo_home: Path, workdir: Path, driver: str
) -> None:
    legacy = paseo_home / "loops" / "loops.json"
    legacy.parent.mkdir(parents=True)
    old = _legacy_loop(workdir)
    legacy.write_text(json.dumps({"loops": [old]}))
    (workdir / "done.txt").write_text("x")
    config = scripted_config({"storage": {"driver": driver}})

    daemon = agent_daemon_factory(config)
    with SyncClient(home=daemon.home, client_type="sdk") as client:
        started = client.call(
            "loop.run",
            {
                "prompt": "tidy up",
                "cwd": str(workdir),
                "provider": "scripted",
                "verifyChecks": ["test -f done.txt"],
                "maxIterations": 1,
            },
        )["loop"]

        def ended() -> dict[str, Any] | None:
            loop: dict[str, Any] = client.call("loop.inspect", {"id": started["id"]})["loop"]
            return loop if loop["status"] != "running" else None

        assert wait_for(ended, timeout=90, what="the loop")["status"] == "succeeded"
    before = _loops(daemon.home)
    assert set(before) == {old["id"], started["id"]}
    assert before[old["id"]] == old
    assert not legacy.exists()
    assert json.loads((legacy.parent / "loops.json.migrated").read_text()) == {"loops": [old]}
    stop_daemon(daemon.home)

    if driver == "json":
        collection = paseo_home / "plugin-records" / "loops" / "loops"
        files = sorted(p.name for p in collection.iterdir())
        assert files == sorted(f"{i}.json" for i in before)
    else:
        assert not (paseo_home / "plugin-records").exists()
        conn = sqlite3.connect(paseo_home / "paseo.db")
        try:
            rows = conn.execute(
                "SELECT id FROM plugin_records WHERE namespace = 'loops' AND collection = 'loops'"
            ).fetchall()
        finally:
            conn.close()
        assert sorted(r[0] for r in rows) == sorted(before)

    restarted = agent_daemon_factory(config)
    assert _loops(restarted.home) == before
    assert not legacy.exists()
