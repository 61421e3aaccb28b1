"""Against the real daemon: a reload reports the paths the file changed, not every field the
effective view fills in for them."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from helpers.daemon_rpc import LiveDaemon

from paseo.client import SyncClient

RunPaseo = Callable[..., subprocess.CompletedProcess[str]]


def test_adding_providers_reports_one_line_per_path_in_the_file(
    daemon: LiveDaemon, run_paseo: RunPaseo
) -> None:
    entries = {
        f"custom{n}": {"extends": "claude", "label": f"Custom {n}"} for n in range(4)
    }
    with SyncClient(home=daemon.home) as client:
        result = client.config_patch({"agents": {"providers": entries}})
    expected = sorted(
        f"agents.providers.{name}.{key}" for name in entries for key in ("extends", "label")
    )
    assert sorted(result.restartRequired) == expected
    assert result.applied == []

    env = {"PASEO_HOME": str(daemon.home)}
    run_paseo("config", "set", "agents.providers.custom0.label", "Renamed", env=env, check=True)
    # Still one line per path in the file: every change pending since start, once.
    reload = run_paseo("reload", env=env, check=True)
    assert reload.stdout.splitlines() == [
        f"restart required: {path} (run `paseo daemon restart`)" for path in expected
    ]
