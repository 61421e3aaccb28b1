"""A model answering HTTP 500: Claude Code's retries are visible live in ``run`` and afterwards
in ``logs``, through the real daemon and CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e


def test_retries_of_a_failing_model_are_shown(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    claude = provider_settings("claude", fake, tmp_path / "programs")
    claude["env"] = {**claude["env"], "CLAUDE_CODE_MAX_RETRIES": "2"}
    daemon.configure({"claude": claude})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    ran = daemon.cli(
        "run",
        "--provider",
        "claude",
        "--cwd",
        str(work),
        "--wait-timeout",
        f"{TURN_TIMEOUT:.0f}s",
        "[[error:500:the fake model broke]]",
        check=False,
    )
    assert ran.returncode != 0
    retries = [line for line in ran.stderr.splitlines() if "retrying" in line]
    assert len(retries) == 2, ran.stderr
    assert "model API error: HTTP 500" in retries[0]
    assert "Traceback" not in ran.stderr
    agent_id = daemon.cli("ls", "-q").stdout.split()[0]
    logs = daemon.cli("logs", agent_id).stdout
    assert logs.count("retrying") == 2, logs
