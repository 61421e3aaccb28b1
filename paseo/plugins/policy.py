"""Which plugins may load: the environment switches and the ``config.json`` entries."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LoadPolicy:
    """Decides, before any import, whether a plugin is loaded.

    ``strict`` (``PASEO_STRICT_PLUGINS=1``) turns every load failure into a hard error.
    ``only`` (``PASEO_LOAD_PLUGINS=a,b``; empty means none) limits third-party plugins.
    ``plugins_enabled`` (``pluginsEnabled`` in config.json) false disables every third-party
    plugin. ``disabled`` (``PASEO_DISABLE_PLUGINS=a,b``, what ``paseo daemon start
    --disable-plugin`` sets) disables the plugins named, built-ins too, for one run.
    ``entries`` are config.json's ``plugins`` entries (``enabled``, ``source``, ``path``).
    """

    strict: bool = False
    only: frozenset[str] | None = None
    plugins_enabled: bool = True
    disabled: frozenset[str] = frozenset()
    entries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_environment(
        cls,
        *,
        plugins_enabled: bool = True,
        entries: Mapping[str, Mapping[str, Any]] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> LoadPolicy:
        environ = os.environ if env is None else env
        only_raw = environ.get("PASEO_LOAD_PLUGINS")
        only = None
        if only_raw is not None:
            only = frozenset(part.strip() for part in only_raw.split(",") if part.strip())
        disabled = environ.get("PASEO_DISABLE_PLUGINS", "")
        return cls(
            disabled=frozenset(part.strip() for part in disabled.split(",") if part.strip()),
            strict=environ.get("PASEO_STRICT_PLUGINS", "") not in ("", "0", "false"),
            only=only,
            plugins_enabled=plugins_enabled,
            entries=dict(entries or {}),
        )

    def allows(self, name: str, *, builtin: bool) -> bool:
        """Whether the plugin ``name`` is enabled (so may be imported)."""
        entry = self.entries.get(name, {})
        if entry.get("enabled") is False or name in self.disabled:
            return False
        if builtin:
            return True
        if not self.plugins_enabled:
            return False
        return self.only is None or name in self.only

    def directory_entries(self) -> list[tuple[str, Mapping[str, Any]]]:
        """``plugins.<id>`` entries that name a directory source, sorted by id."""
        return sorted(
            (name, entry)
            for name, entry in self.entries.items()
            if entry.get("source") == "directory" and entry.get("path")
        )
