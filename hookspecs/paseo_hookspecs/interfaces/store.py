"""The store driver interface.

A driver implements :class:`Store`: it is constructed with the state root and its settings,
opened once by the daemon (after the home lock is held), and exposes the repositories of
:mod:`paseo_hookspecs.store`. Drivers register in the ``paseo.store`` entry-point group and are
chosen by ``storage.driver`` in ``config.json``.
"""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import Any

from paseo_hookspecs.store import Repositories


class Store(Repositories):
    """A store driver instance bound to one ``$PASEO_HOME``."""

    name: str = ""
    """The driver name (its entry-point name)."""

    def __init__(self, home: Path, settings: Any = None) -> None:
        self.home = home
        self.settings = settings
        self.quarantined = []

    @abstractmethod
    async def open(self) -> None:
        """Recover and load durable state (roll back a prepared label transaction, clean up a
        committed one, quarantine corrupt files, drop temporary files of interrupted writes).
        When this returns every repository reflects every write acknowledged before the last
        shutdown or crash."""

    @abstractmethod
    async def close(self) -> None:
        """Finish in-flight writes and release resources. Idempotent."""
