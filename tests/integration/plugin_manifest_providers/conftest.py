"""Fixtures for plugins whose manifest declares ACP providers: npm packages packed in the test,
the real CLI on a private state root, and daemons that are always stopped at teardown."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon
from helpers.plugin_sources import cli_environment

PackNpmPackage = Callable[..., Path]


def _pack_npm_package(
    workdir: Path,
    *,
    name: str,
    bin_name: str,
    exec_argv: list[str],
    manifest: dict[str, Any] | None = None,
) -> Path:
    """``npm pack`` a package with no dependencies whose executable ``bin_name`` is a shell
    wrapper exec-ing ``exec_argv`` (plus its own arguments); ``manifest`` becomes its ``paseo``
    key. Returns the tarball."""
    source = workdir / "package-src"
    (source / "bin").mkdir(parents=True)
    wrapper = source / "bin" / bin_name
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.join(exec_argv)} "$@"\n')
    wrapper.chmod(0o755)
    meta: dict[str, Any] = {"name": name, "version": "1.0.0", "bin": {bin_name: f"bin/{bin_name}"}}
    if manifest is not None:
        meta["paseo"] = manifest
    (source / "package.json").write_text(json.dumps(meta))
    out = workdir / "packed"
    out.mkdir()
    subprocess.run(
        ["npm", "pack", "--pack-destination", str(out)],
        cwd=source,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (tarball,) = out.glob("*.tgz")
    return tarball


@dataclass
class Paseo:
    """The real ``paseo`` CLI on one state root, and the daemons it started."""

    run_paseo: Any
    env: dict[str, str]
    home: Path
    daemons: list[LiveDaemon] = field(default_factory=list)

    def run(
        self,
        *args: str,
        check: bool = True,
        timeout: float = 120,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return self.run_paseo(*args, env={**self.env, **(env or {})}, check=check, timeout=timeout)

    def json(self, *args: str, env: dict[str, str] | None = None) -> Any:
        return json.loads(self.run(*args, "-o", "json", env=env).stdout)

    def config(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads((self.home / "config.json").read_text())
        return result

    def write_config(self, config: dict[str, Any]) -> None:
        (self.home / "config.json").write_text(json.dumps(config))

    def start_daemon(self, env: dict[str, str] | None = None) -> LiveDaemon:
        live = start_daemon(self.home, {**self.env, **(env or {})})
        self.daemons.append(live)
        return live

    def stop_daemon(self) -> None:
        stopped = stop_daemon(self.home)
        assert stopped.returncode == 0, stopped.stderr


@pytest.fixture
def paseo(run_paseo: Any, tmp_path: Path, paseo_home: Path) -> Iterator[Paseo]:
    paseo_home.mkdir()
    # Third-party plugins on explicitly, whatever the default is.
    (paseo_home / "config.json").write_text('{"pluginsEnabled": true}\n')
    cli = Paseo(run_paseo=run_paseo, env=cli_environment(tmp_path), home=paseo_home)
    try:
        yield cli
    finally:
        if cli.daemons:
            stop_daemon(paseo_home)
            for live in cli.daemons:
                kill_leftover(live.pid)


@pytest.fixture
def pack_npm_package() -> PackNpmPackage:
    """:func:`_pack_npm_package` (skips the test when npm is missing)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    return _pack_npm_package


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The directory agents run in."""
    path = tmp_path / "work"
    path.mkdir()
    return path
