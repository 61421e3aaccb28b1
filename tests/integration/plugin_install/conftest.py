"""The real CLI against a private state root with third-party plugins switched on."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.plugin_sources import cli_environment


@dataclass
class Cli:
    """Runs ``paseo`` (``python -m paseo``) with the environment the plugin sources need."""

    run_paseo: Any
    env: dict[str, str]
    home: Path

    def run(
        self, *args: str, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return self.run_paseo(*args, env=self.env, check=check, timeout=timeout)

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def fails(self, *args: str) -> str:
        """Run a command expected to fail; return its stderr."""
        result = self.run(*args, check=False)
        assert result.returncode != 0, result.stdout
        return result.stderr

    def config(self) -> dict[str, Any]:
        path = self.home / "config.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def sources(self) -> dict[str, Any]:
        path = self.home / "plugins" / "sources.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def versions(self, plugin_id: str) -> list[Path]:
        """The retained ``{uuid}`` directories of ``plugin_id``."""
        directory = self.home / "plugins" / plugin_id
        return sorted(directory.iterdir()) if directory.exists() else []


@pytest.fixture
def cli(run_paseo: Any, tmp_path: Path, paseo_home: Path) -> Cli:
    paseo_home.mkdir()
    # Third-party plugins on explicitly, whatever the default is.
    (paseo_home / "config.json").write_text('{"pluginsEnabled": true}\n')
    return Cli(run_paseo=run_paseo, env=cli_environment(tmp_path), home=paseo_home)
