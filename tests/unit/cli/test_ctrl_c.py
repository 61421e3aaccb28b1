"""Ctrl-C in the first moments of a command (issue 27, item 7): once a ``KeyboardInterrupt``
traceback from the middle of an import; now the process ends as SIGINT ends any program."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

# Sends SIGINT to its own process while the command's module is being imported: the moment a
# user's early Ctrl-C lands, made deterministic.
INTERRUPT_DURING_IMPORT = """
import os, runpy, signal, sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "paseo.cli.app":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["paseo", *sys.argv[1:]]
runpy.run_module("paseo", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_a_command_is_loading_prints_no_traceback(tmp_path: Path) -> None:
    script = tmp_path / "interrupt.py"
    script.write_text(INTERRUPT_DURING_IMPORT)
    for command in (["ls"], ["config", "get"], ["run", "hello"]):
        result = subprocess.run(
            [sys.executable, str(script), *command],
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(os.environ),
            check=False,
        )
        assert "Traceback" not in result.stderr, result.stderr
        assert "KeyboardInterrupt" not in result.stderr
        # Ended by SIGINT, as the shell expects of a program interrupted with Ctrl-C.
        assert result.returncode == -signal.SIGINT, (result.returncode, result.stderr)
