"""Verifying a prepared plugin in a child process before it becomes active.

The installing process never imports plugin code: :func:`verify` starts
``python -P -m paseo.plugin_install.verifier RESULT`` and hands it the request on stdin. The
child (:mod:`paseo.plugin_install.verifier`) checks the declarative manifest, then loads the
plugin with the kernel's own loader in strict mode (so an import error, an exception while
loading, a hook that does not exist or has wrong arguments is a failure), calls every
registration hook, checks what they registered and validates the plugin's config.json settings
against its config section.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import InvalidParams

DEFAULT_TIMEOUT = 300.0
"""Seconds a verification may take (importing a large plugin can be slow, never unbounded)."""


async def verify(
    request: dict[str, Any],
    *,
    python: str,
    cwd: Path,
    time_limit: float = DEFAULT_TIMEOUT,
    inherit: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Run the verifier for ``request``; return its report or raise :class:`InvalidParams`
    with the reason the plugin was refused."""
    from paseo.plugin_install._proc import run

    with tempfile.TemporaryDirectory(dir=cwd, prefix=".verify-") as scratch:
        result_path = Path(scratch) / "result.json"
        completed = await run(
            [python, "-P", "-m", "paseo.plugin_install.verifier", str(result_path)],
            cwd=Path(scratch),
            time_limit=time_limit,
            stdin=json.dumps(request).encode(),
            inherit=inherit,
        )
        try:
            report = json.loads(result_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            report = None
    if not isinstance(report, dict):
        tail = completed.stderr.strip()[-2000:]
        raise InvalidParams(f"plugin verification crashed (exit {completed.returncode}): {tail}")
    if not report.get("ok"):
        raise InvalidParams(f"plugin verification failed: {report.get('error')}")
    return report
