"""The store contract: durable state behind repository methods.

Every method maps to one SQL statement or one SQL transaction, even on JSON files; callers never
read-merge-write. The repositories are defined in :mod:`paseo_hookspecs.store`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any


class Store(ABC):
    """A store driver instance bound to one ``$PASEO_HOME``.

    Drivers are constructed with ``Driver(home, settings)`` and opened once by the daemon, after
    it holds the home lock.
    """

    def __init__(self, home: Path, settings: Any = None) -> None:
        self.home = home
        self.settings = settings

    @abstractmethod
    async def open(self) -> None:
        """Recover and load durable state. When this returns, every repository reflects every
        write acknowledged before the last shutdown or crash."""

    @abstractmethod
    async def close(self) -> None:
        """Flush and release resources. Idempotent."""
