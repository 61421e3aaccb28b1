"""No Python traceback reaches a user's terminal: a closed pipe, a garbage daemon address, a
password prompt without a terminal and a failure nothing anticipated each end with a one-line
message and an exit code; the traceback of the last goes to ``$PASEO_HOME/cli.log``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RAISES = """
from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import CliCommandGroup

def _boom(args):
    raise RuntimeError("something nobody planned for")

def _configure(parser):
    parser.set_defaults(run=_boom)

@hookimpl
def paseo_register_cli_commands(register):
    register(CliCommandGroup(name="boom", help="raises", configure=_configure))
"""


def _paseo(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: int | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paseo", *args],
        env=env,
        stdin=stdin,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "args", [("--help",), ("--version",), ("config", "get", "--effective", "-o", "json")]
)
def test_a_closed_pipe_ends_quietly(args: tuple[str, ...], paseo_home: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "paseo", "--home", str(paseo_home), *args]
            if args[0] == "config"
            else [sys.executable, "-m", "paseo", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert result.stderr == ""


def test_a_garbage_daemon_address_is_a_usage_error(paseo_home: Path) -> None:
    result = _paseo(
        "--home", str(paseo_home), "ls", env={**os.environ, "PASEO_HOST": "garbage:port"}
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "invalid daemon address" in result.stderr
    assert "PASEO_HOST" in result.stderr


def test_set_password_without_a_terminal_says_how_to_pipe_it(paseo_home: Path) -> None:
    result = _paseo("--home", str(paseo_home), "daemon", "set-password", stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "--password-stdin" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (paseo_home / "config.json").exists()


def test_set_password_from_an_empty_stdin_changes_nothing(paseo_home: Path) -> None:
    result = _paseo(
        "--home", str(paseo_home), "daemon", "set-password", "--password-stdin", input=""
    )
    assert result.returncode == 1
    assert "at least 8 characters" in result.stderr
    assert not (paseo_home / "config.json").exists()


def test_an_unexpected_failure_prints_one_line_and_logs_the_traceback(
    paseo_home: Path, tmp_path: Path
) -> None:
    plugin_dir = tmp_path / "boom-plugin"
    (plugin_dir / "src" / "boom_plugin").mkdir(parents=True)
    (plugin_dir / "src" / "boom_plugin" / "__init__.py").write_text(RAISES)
    (plugin_dir / "pyproject.toml").write_text(
        '[project]\nname = "paseo-boom"\nversion = "0.1.0"\n\n'
        '[project.entry-points.paseo]\nboom = "boom_plugin"\n'
    )
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text(
        json.dumps({"plugins": {"boom": {"source": "directory", "path": str(plugin_dir)}}})
    )
    env = {k: v for k, v in os.environ.items() if k != "PASEO_DEBUG"}
    result = _paseo("--home", str(paseo_home), "boom", env=env)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "unexpected RuntimeError: something nobody planned for" in result.stderr
    log = (paseo_home / "cli.log").read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in log
    assert "something nobody planned for" in log
    debug = _paseo("--home", str(paseo_home), "boom", env={**env, "PASEO_DEBUG": "1"})
    assert "Traceback (most recent call last)" in debug.stderr
