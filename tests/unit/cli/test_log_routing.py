"""The CLI's handler for the kernel's warnings when ``logging`` is imported only later, by
whatever needs it (``paseo ls`` never imports it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_warning_logged_after_logging_is_first_imported_is_one_line(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from paseo.cli.app import _route_kernel_logs\n"
        "_route_kernel_logs(['ls'])\n"
        "assert 'logging' not in sys.modules, 'the CLI imported logging itself'\n"
        "import logging\n"
        "try:\n"
        "    raise ValueError('boom')\n"
        "except ValueError:\n"
        "    logging.getLogger('paseo.plugins').warning('plugin x failed to load', exc_info=True)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=tmp_path,
    )
    assert result.stderr == "paseo: warning: plugin x failed to load\n"
