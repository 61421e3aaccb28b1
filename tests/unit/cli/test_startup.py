"""The CLI's start-up contract: help and version are answered without touching state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from paseo import __version__


def test_help_creates_no_home(run_paseo, paseo_home: Path) -> None:
    result = run_paseo("--help", check=True)
    assert "usage: paseo" in result.stdout
    assert "daemon" in result.stdout
    assert not paseo_home.exists()


def test_version_prints_the_version_and_creates_no_home(run_paseo, paseo_home: Path) -> None:
    result = run_paseo("--version", check=True)
    assert result.stdout.strip() == f"paseo {__version__}"
    assert not paseo_home.exists()


def test_unknown_argument_fails_before_any_path_is_created(run_paseo, paseo_home: Path) -> None:
    result = run_paseo("daemon", "start", "--foreground", "--no-such-flag")
    assert result.returncode == 2
    assert "--no-such-flag" in result.stderr
    assert not paseo_home.exists()


def test_unknown_command_is_a_usage_error(run_paseo, paseo_home: Path) -> None:
    result = run_paseo("frobnicate")
    assert result.returncode == 2
    assert "frobnicate" in result.stderr
    assert not paseo_home.exists()


def test_command_help_creates_no_home(run_paseo, paseo_home: Path) -> None:
    result = run_paseo("daemon", "start", "--help", check=True)
    assert "--foreground" in result.stdout
    assert not paseo_home.exists()


def test_help_imports_no_plugin_and_no_third_party_library() -> None:
    code = (
        "import sys\n"
        "from paseo.cli import main\n"
        "import io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'pluggy','pydantic','stevedore','websockets','argparse','asyncio','paseo_hookspecs'}"
        " or m.startswith('paseo_'))\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stdout.strip() == "[]"


def test_global_options_work_before_and_after_the_command(run_paseo) -> None:
    before = run_paseo("-o", "json", "daemon", "status")
    after = run_paseo("daemon", "status", "-o", "json")
    assert before.stdout == after.stdout
    assert '"running": false' in before.stdout
