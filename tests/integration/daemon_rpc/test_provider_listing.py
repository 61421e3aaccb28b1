"""Against the real daemon and CLI: a provider whose probe fails is an error, not an empty
table."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from helpers.daemon_rpc import LiveDaemon

RunPaseo = Callable[..., subprocess.CompletedProcess[str]]


def test_provider_models_fails_when_the_probe_fails(
    daemon_factory: Callable[..., LiveDaemon], run_paseo: RunPaseo
) -> None:
    quitter = {
        "extends": "acp",
        "label": "Exits at start",
        "command": [sys.executable, "-c", "import sys; sys.exit(3)"],
    }
    live = daemon_factory({"agents": {"providers": {"quitter": quitter}}})
    env = {"PASEO_HOME": str(live.home)}
    for extra in ((), ("--modes",)):
        result = run_paseo("provider", "models", "quitter", *extra, env=env)
        assert result.returncode != 0, result.stdout
        assert "probe session failed" in result.stderr
        assert "agents.providers.quitter.command" in result.stderr
        assert "Traceback" not in result.stderr
        assert result.stdout == ""
