"""What the kernel knows about each plugin: the rows of ``paseo plugins list``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paseo.plugins.extras import MissingExtra

BUILTIN_DISTRIBUTION = "paseo"
"""Built-ins are the entry points declared by the ``paseo`` distribution itself."""


@dataclass
class PluginRecord:
    """One plugin (hook plugin or named driver) and the outcome of loading it."""

    name: str
    version: str | None
    distribution: str | None
    builtin: bool
    source: str
    """``entrypoint`` (an installed distribution) or ``directory`` (a path in config.json)."""
    enabled: bool
    kind: str = "hooks"
    """``hooks`` for pluggy plugins, else the driver group (``paseo.store``, …)."""
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    path: str | None = None
    loaded: bool = False
    unavailable: MissingExtra | None = None
    """Set when the extra it needs is not installed: it is not imported, and ``error`` says
    what to install (not a failure: strict mode does not refuse it)."""

    def to_json(self) -> dict[str, Any]:
        """The documented ``paseo plugins list -o json`` object."""
        return {
            "name": self.name,
            "version": self.version,
            "distribution": self.distribution,
            "builtin": self.builtin,
            "hooks": list(self.hooks),
            "source": self.source,
            "enabled": self.enabled,
            "error": self.error,
        }


class PluginLoadError(Exception):
    """Raised instead of isolating a load failure when strict mode is on."""
