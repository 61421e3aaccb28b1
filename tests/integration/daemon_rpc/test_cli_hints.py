"""Advice the CLI adds to the daemon's answers, against the real daemon (issue 27, item 7)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon


def test_a_program_installed_after_the_daemon_started_says_restart_the_daemon(
    daemon_factory: Callable[..., LiveDaemon], run_paseo: Any, tmp_path: Path
) -> None:
    """The daemon keeps the PATH it started with: a program installed since (here: on the
    shell's PATH only) is "not found" until `paseo daemon restart`."""
    bin_dir = tmp_path / "new-bin"
    bin_dir.mkdir()
    program = bin_dir / "claude-just-installed"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    daemon = daemon_factory(
        config={"agents": {"providers": {"claude": {"command": [program.name]}}}}
    )
    shell = {"PASEO_HOME": str(daemon.home), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}

    listed = run_paseo("provider", "ls", env=shell)
    assert listed.returncode == 0, listed.stderr
    assert f"'{program.name}' was not found" in listed.stdout
    hint = (
        f"paseo: hint: the daemon looks programs up on the PATH it was started with; "
        f"'{program.name}' is on this shell's PATH ({program}) but not on the daemon's: "
        "run `paseo daemon restart`"
    )
    assert hint in listed.stderr

    ran = run_paseo("run", "--provider", "claude", "--cwd", str(tmp_path), "hello", env=shell)
    assert ran.returncode != 0
    assert "was not found" in ran.stderr
    assert hint in ran.stderr
    # Not on the shell's PATH either: the hint says when a restart helps.
    elsewhere = run_paseo("provider", "ls", env={"PASEO_HOME": str(daemon.home)})
    assert f"if you installed '{program.name}' after the daemon started" in elsewhere.stderr
