"""Real Claude Code through the relay: ``paseo relay serve`` on loopback, a daemon with the
relay on, and our CLI in another home reaching it only by the offer URL (``--host``): it lists
agents, runs a prompt, and answers the permission the write asks for. Nothing leaves 127.0.0.1
(the refusing proxy stays untouched)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from e2e.daemon.harness import PERMISSION_MODES, TURN_TIMEOUT, RealDaemon, provider_settings
from helpers.relay_process import relay_serve

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"


def test_claude_code_through_the_relay_by_offer_url(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    other = tmp_path / "client-home"
    other.mkdir()
    work = tmp_path / "work"
    work.mkdir()

    with relay_serve() as (endpoint, _relay):
        config = {
            "daemon": {"relay": {"enabled": True, "endpoint": endpoint}},
            "agents": {
                "providers": {"claude": provider_settings("claude", fake, tmp_path / "programs")}
            },
        }
        (daemon.home / "config.json").write_text(json.dumps(config))
        daemon.start()
        url = json.loads(daemon.cli("daemon", "pair", "--json").stdout)["url"]

        def remote(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
            env = {**os.environ, "PASEO_HOME": str(other), "PASEO_HOST": url}
            result = subprocess.run(
                [sys.executable, "-m", "paseo", *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=TURN_TIMEOUT * 2,
                check=False,
            )
            if check:
                assert result.returncode == 0, f"paseo {' '.join(args)}:\n{result.stderr}"
            return result

        assert json.loads(remote("ls", "-o", "json").stdout) == []
        ran = remote(
            "run",
            "--provider",
            "claude",
            "--cwd",
            str(work),
            "--title",
            "relayed",
            "--wait-timeout",
            WAIT,
            "--mode",
            PERMISSION_MODES["claude"],
            "[[reply:hello through the relay]]",
        )
        assert ran.stdout == "hello through the relay\n"
        listed = json.loads(remote("ls", "-o", "json").stdout)
        assert [a["title"] for a in listed] == ["relayed"]

        asking = remote("send", "relayed", "[[write:relayed.txt:through]]", check=False)
        assert asking.returncode == 4, asking.stderr
        pending = json.loads(remote("permit", "ls", "-o", "json").stdout)
        assert len(pending) == 1
        remote("permit", "allow", "relayed")
        remote("wait", "relayed", "--timeout", WAIT)
        assert (work / "relayed.txt").read_text().strip() == "through"

        shown = json.loads(daemon.cli("daemon", "status", "-o", "json").stdout)
        assert shown["relay"]["state"] == "connected"
        # The client's home holds nothing of the daemon's.
        assert not (other / "local-credential").exists()
