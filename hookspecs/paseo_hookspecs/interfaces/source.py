"""Managed plugin sources: where ``paseo plugins install`` fetches a plugin from."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PreparedPlugin:
    """A plugin fetched into its own fresh directory, not yet verified or activated."""

    path: Path
    """The directory the plugin loads from."""
    revision: str | None
    """The resolved revision (a commit id, a package version), when the source has one."""
    remote: str | None
    """The acquisition remote to record in ``plugins/sources.json``."""


class PluginSource(ABC):
    """One kind of source (``git``, ``npm``, ``pypi``, ``directory``).

    Implement and register (the built-in sources in ``paseo_plugin_sources`` are written so)::

        import shutil
        from pathlib import Path

        from paseo_hookspecs import hookimpl
        from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

        class ArchiveSource(PluginSource):
            kind = "archive"

            def matches(self, spec: str) -> bool:
                return spec.startswith("archive:")

            async def prepare(self, spec: str, destination: Path) -> PreparedPlugin:
                shutil.unpack_archive(spec.removeprefix("archive:"), destination)
                return PreparedPlugin(path=destination, revision=None, remote=spec)

        @hookimpl
        def paseo_register_plugin_sources(register):
            register(ArchiveSource())

    with ``[project.entry-points.paseo] archive-source = "my_package.plugin"``. A real source
    must check archive members for paths escaping ``destination`` before extracting.
    """

    kind: str
    """Unique kind name."""

    @abstractmethod
    def matches(self, spec: str) -> bool:
        """Whether this source understands the user's install ``spec`` (no I/O)."""

    @abstractmethod
    async def prepare(self, spec: str, destination: Path) -> PreparedPlugin:
        """Fetch ``spec`` into ``destination`` (a fresh, empty directory) and return what was
        prepared. Must execute no plugin code. On failure raise; the caller removes the
        directory."""
