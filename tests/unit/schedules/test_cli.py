"""How a ``paseo schedule create`` command line becomes ``schedule.create`` params."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from paseo.cli.commands.schedule import configure, create_params, describe_cadence
from paseo.cli.errors import CliError

AGENT = "aaaa1111-0000-4000-8000-000000000001"
NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    configure(parser)
    return parser.parse_args(["create", *argv])


def params(*argv: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return create_params(parse(*argv), env or {}, now=NOW)


def test_without_a_target_inside_an_agent_the_schedule_targets_that_agent() -> None:
    made = params("p", "--every", "5m", env={"PASEO_AGENT_ID": AGENT})
    assert made["target"] == {"type": "agent", "agentId": AGENT}


def test_without_a_target_elsewhere_a_new_agent_runs_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    made = params("p", "--every", "5m", "--provider", "claude")
    assert made["target"] == {
        "type": "new-agent",
        "config": {"cwd": str(tmp_path), "provider": "claude"},
    }


def test_self_is_resolved_from_paseo_agent_id_and_other_names_pass_through() -> None:
    assert params("p", "--every", "1m", "--target", "self", env={"PASEO_AGENT_ID": AGENT})[
        "target"
    ] == {"type": "agent", "agentId": AGENT}
    assert params("p", "--every", "1m", "--target", "main")["target"] == {
        "type": "agent",
        "agentId": "main",
    }
    with pytest.raises(CliError, match=r"needs \$PASEO_AGENT_ID"):
        params("p", "--every", "1m", "--target", "self")


def test_cadences_and_their_refusals() -> None:
    assert params("p", "--cron", "0 9 * * *", "--tz", "Asia/Tokyo")["cadence"] == {
        "type": "cron",
        "expression": "0 9 * * *",
        "timezone": "Asia/Tokyo",
    }
    assert params("p", "--every", "1h30m")["cadence"] == {"type": "every", "everyMs": 5_400_000}
    for argv, message in (
        (("--cron", "* * * * *", "--every", "1m"), "not both"),
        ((), "needs --cron EXPR or --every DURATION"),
        (("--every", "0"), "must be a positive duration"),
        (("--every=-1m",), "must be a positive duration"),
        (("--every", "soon"), "not a duration"),
        (("--every", "1m", "--tz", "UTC"), "--tz applies to --cron only"),
    ):
        with pytest.raises(CliError, match=message):
            params("p", *argv)


def test_expires_in_and_max_runs() -> None:
    made = params("p", "--every", "1m", "--expires-in", "1d12h", "--max-runs", "4")
    assert made["expiresAt"] == "2026-01-07T00:00:00.000Z"
    assert made["maxRuns"] == 4
    with pytest.raises(CliError, match="at least 1"):
        params("p", "--every", "1m", "--max-runs", "0")


def test_cadences_read_for_people() -> None:
    assert describe_cadence({"type": "every", "everyMs": 300_000}) == "every 5m"
    assert describe_cadence({"type": "cron", "expression": "0 9 * * *"}) == "cron 0 9 * * * (UTC)"
