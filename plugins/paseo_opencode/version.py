"""OpenCode's version, read from the npm package that holds the binary (nothing is run)."""

from __future__ import annotations

import json
import os
from pathlib import Path


def package_version(program: str, package: str = "opencode-ai") -> str | None:
    """The ``version`` of the ``package.json`` named ``package`` above ``program``'s real path."""
    here = Path(os.path.realpath(program)).parent
    for folder in (here, *here.parents):
        manifest = folder / "package.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text())
        except (OSError, ValueError):
            return None
        if isinstance(data, dict) and data.get("name") == package:
            version = data.get("version")
            return version if isinstance(version, str) else None
    return None
