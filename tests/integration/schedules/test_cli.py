"""``paseo schedule`` against a real daemon: the round trip, the output conventions, local
times, refused input and the report of a quarantined schedule file. (Runs themselves, with a
real agent program, are in ``tests/e2e/schedules``.)"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon

GHOST = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def daemon(paseo_home: Path) -> Iterator[LiveDaemon]:
    live = start_daemon(paseo_home)
    try:
        yield live
    finally:
        stop_daemon(paseo_home)
        kill_leftover(live.pid)


@pytest.fixture(scope="module")
def refusing_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDaemon]:
    """One daemon for the tests of refused input, which create nothing: each checks that the
    schedule list is still empty after its refusal, so a refusal that let a schedule through
    fails that test (and the ones after it), never passes. Saves a daemon start and stop per
    case (20 cases). Started before the per-test environment exists, so it gets its own."""
    root = tmp_path_factory.mktemp("schedule-refusals")
    home = root / "paseo-home"
    (root / "user-home").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith("PASEO_"):
                patch.delenv(name)
        patch.setenv("HOME", str(root / "user-home"))
        patch.setenv("PASEO_STRICT_PLUGINS", "1")
        live = start_daemon(home)
    try:
        yield live
    finally:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HOME", str(root / "user-home"))
            stop_daemon(home)
        kill_leftover(live.pid)


def test_create_list_pause_resume_delete_round_trip(
    daemon: LiveDaemon, run_paseo: Any, tmp_path: Path
) -> None:
    def paseo(*args: str) -> Any:
        return json.loads(run_paseo("schedule", *args, "-o", "json", check=True).stdout)

    created = paseo(
        "create",
        "check the build",
        "--cron",
        "0 9 * * 1-5",
        "--tz",
        "Europe/Paris",
        "--name",
        "morning",
        "--provider",
        "claude",
        "--cwd",
        str(tmp_path),
        "--max-runs",
        "3",
        "--expires-in",
        "30d",
    )
    assert created["cadence"] == {
        "type": "cron",
        "expression": "0 9 * * 1-5",
        "timezone": "Europe/Paris",
    }
    assert created["target"]["config"]["provider"] == "claude"
    assert created["target"]["config"]["cwd"] == str(tmp_path)
    assert (created["status"], created["maxRuns"]) == ("active", 3)
    assert created["nextRunAt"].endswith(("07:00:00.000Z", "08:00:00.000Z"))
    assert created["expiresAt"] is not None

    every = paseo("create", "tidy up", "--every", "90m", "--provider", "claude")
    assert every["cadence"] == {"type": "every", "everyMs": 90 * 60 * 1000}

    assert [s["id"] for s in paseo("ls")] == [created["id"], every["id"]]
    quiet = run_paseo("schedule", "ls", "-q", check=True).stdout.split()
    assert quiet == [created["id"], every["id"]]
    table = run_paseo("schedule", "ls", "--no-headers", check=True).stdout
    assert "NEXT RUN" not in table
    assert "morning" in table
    listed = yaml.safe_load(run_paseo("schedule", "ls", "-o", "yaml", check=True).stdout)
    assert [s["id"] for s in listed] == [created["id"], every["id"]]

    paused = paseo("pause", "morning")
    assert (paused["status"], paused["nextRunAt"]) == ("paused", None)
    assert [s["id"] for s in paseo("ls", "--status", "paused")] == [created["id"]]
    resumed = paseo("resume", created["id"][:4])
    assert resumed["status"] == "active"
    assert resumed["nextRunAt"] == created["nextRunAt"]
    assert paseo("logs", "morning") == []

    assert paseo("delete", "morning") == {"scheduleId": created["id"], "deleted": True}
    assert [s["id"] for s in paseo("ls")] == [every["id"]]
    gone = run_paseo("schedule", "inspect", "morning")
    assert gone.returncode == 1
    assert "no schedule is named 'morning'" in gone.stderr


def test_next_run_is_shown_in_local_time(daemon: LiveDaemon, run_paseo: Any) -> None:
    created = json.loads(
        run_paseo(
            "schedule", "create", "x", "--cron", "0 12 * * *", "--provider", "claude",
            "-o", "json", check=True,
        ).stdout
    )
    assert created["nextRunAt"].endswith("T12:00:00.000Z")
    shown = run_paseo(
        "schedule", "inspect", created["id"], env={"TZ": "Asia/Tokyo"}, check=True
    ).stdout
    assert "21:00:00 JST" in shown
    listed = run_paseo("schedule", "ls", env={"TZ": "Asia/Tokyo"}, check=True).stdout
    assert "21:00:00 JST" in listed


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--cron", "0 9 * *"], {}, "invalid cron expression '0 9 * *': it needs exactly five"),
        (["--cron", "0 99 * * *"], {}, "invalid cron expression '0 99 * * *': bad hour"),
        (["--cron", "0 9 * * *", "--tz", "Europe/Atlantis"], {}, "unknown time zone"),
        (["--cron", "0 9 * * *", "--every", "5m"], {}, "not both"),
        ([], {}, "needs --cron EXPR or --every DURATION"),
        (["--every", "0s"], {}, "--every must be a positive duration"),
        (["--every=-5m"], {}, "--every must be a positive duration"),
        (["--every", "5m", "--target", "nobody"], {}, "unknown target agent 'nobody'"),
        (["--every", "5m", "--target", "self"], {}, "--target self needs $PASEO_AGENT_ID"),
        # Inside an agent, no --target means that agent.
        (["--every", "5m"], {"PASEO_AGENT_ID": GHOST}, f"unknown target agent '{GHOST}'"),
        (["--every", "5m", "--max-runs", "0"], {}, "--max-runs must be at least 1"),
        (["--every", "5m", "--target", "nobody", "--provider", "x"], {}, "new-agent target"),
        # A bare number once meant seconds, and each run started an agent.
        (["--every", "5"], {}, "--every 5 has no unit: say 5s, 5m, 5h or 5d"),
        (["--every", "5m", "--expires-in", "7"], {}, "--expires-in 7 has no unit"),
        (["--every", "30s"], {}, "cadence.everyMs: the interval must be at least 60 s"),
    ],
)
def test_bad_input_is_refused_at_create_with_a_specific_message(
    refusing_daemon: LiveDaemon,
    run_paseo: Any,
    args: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    home = {"PASEO_HOME": str(refusing_daemon.home)}
    refused = run_paseo("schedule", "create", "prompt", *args, env={**home, **env})
    assert refused.returncode != 0
    assert message in refused.stderr
    listed = json.loads(run_paseo("schedule", "ls", "-o", "json", env=home, check=True).stdout)
    assert listed == []


def test_a_schedule_file_that_fails_validation_is_quarantined_and_reported(
    paseo_home: Path, run_paseo: Any
) -> None:
    folder = paseo_home / "schedules"
    folder.mkdir(parents=True)
    (folder / "deadbeef.json").write_text(json.dumps({"id": "deadbeef", "prompt": "hi"}))
    live = start_daemon(paseo_home)
    try:
        listed = run_paseo("schedule", "ls", check=True)
        assert "deadbeef.json was invalid and moved to" in listed.stderr
        assert not (folder / "deadbeef.json").exists()
    finally:
        stop_daemon(paseo_home)
        kill_leftover(live.pid)


@pytest.mark.parametrize(
    ("cadence", "field"),
    [
        ({"type": "every", "everyMs": 1}, "cadence.everyMs"),
        ({"type": "every", "everyMs": 10**20}, "cadence.everyMs"),
        ({"type": "every", "everyMs": 10**15}, "cadence.everyMs"),
        ({"type": "cron", "expression": "0 0 31 2 *"}, "cadence.expression"),
        ({"type": "cron", "expression": "0 9 * * *", "timezone": "A/\u0000"}, "cadence.timezone"),
    ],
)
def test_bad_cadences_are_invalid_params_naming_the_field_never_internal_errors(
    refusing_daemon: LiveDaemon, tmp_path: Path, cadence: dict[str, Any], field: str
) -> None:
    from paseo_hookspecs.errors import PaseoError

    from paseo.client import SyncClient

    params = {
        "prompt": "p",
        "cadence": cadence,
        "target": {"type": "new-agent", "config": {"cwd": str(tmp_path), "provider": "claude"}},
    }
    with SyncClient(home=refusing_daemon.home, client_type="cli") as client:
        with pytest.raises(PaseoError) as refused:
            client.call("schedule.create", params)
        assert refused.value.code == "invalid_params"
        if "errors" in refused.value.data:  # refused by the wire model (too big for an int64)
            assert refused.value.data["errors"][0]["path"].endswith("everyMs")
            assert "everyMs" in refused.value.message
        else:
            assert refused.value.message.startswith(f"{field}: ")
            assert refused.value.data["field"] == field
        assert client.call("schedule.list", {})["schedules"] == []
    assert "Traceback" not in (refusing_daemon.home / "daemon.log").read_text()
