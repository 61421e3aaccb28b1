"""The soak of ``bench/soak.py`` in its bounded form: fuzz, load, a never-reading client and a
wrong-password flood against one real daemon, every target checked by the bench itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).parents[3] / "bench" / "soak.py"


@pytest.mark.slow
def test_the_bounded_soak_holds() -> None:
    result = subprocess.run(
        [sys.executable, str(SOAK), "--ci"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["fuzz"]["unanswered"] == 0
    assert figures["load"]["unanswered"] == 0
    assert figures["daemon_alive"] is True
