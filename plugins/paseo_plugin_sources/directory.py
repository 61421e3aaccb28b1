"""The ``directory`` source: a local plugin directory used in place.

Spec: ``directory:<absolute path>``. Nothing is copied: the prepared path is the directory
itself, so edits to it take effect at the next start. Removing the plugin later leaves the
directory alone.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

_PREFIX = "directory:"


def _check(path: Path) -> Path:
    if not path.is_absolute():
        raise InvalidParams(f"directory source {path}: an absolute path is required")
    if not path.is_dir():
        raise InvalidParams(f"directory source {path} is not a directory")
    if not (path / "pyproject.toml").is_file():
        raise InvalidParams(f"directory source {path} has no pyproject.toml")
    return path.resolve()


class DirectorySource(PluginSource):
    """Plugins loaded from a local directory in place."""

    kind = "directory"

    def matches(self, spec: str) -> bool:
        """``directory:…`` specs."""
        return spec.startswith(_PREFIX)

    async def prepare(self, spec: str, destination: Path) -> PreparedPlugin:
        """Check the directory; ``destination`` is left unused (and empty)."""
        path = await asyncio.to_thread(_check, Path(spec[len(_PREFIX) :].strip()))
        return PreparedPlugin(path=path, revision=None, remote=None)
