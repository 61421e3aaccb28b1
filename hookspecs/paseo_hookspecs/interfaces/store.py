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

from paseo_hookspecs.plugin_records import PluginRecordStore
from paseo_hookspecs.store import Repositories


class Store(Repositories):
    """A store driver instance bound to one ``$PASEO_HOME``.

    Implement and register: subclass it, give every repository of
    :class:`~paseo_hookspecs.store.Repositories` an object implementing its ABC, and name the
    class in the ``paseo.store`` entry-point group (no hook: a driver is chosen by name and the
    others are never imported)::

        class MyStore(Store):
            name = "mystore"

            async def open(self) -> None:
                self.agents = MyAgentRepository(self.home)
                ...                        # timeline, schedules, projects, workspaces, …

            async def close(self) -> None:
                ...

        # pyproject.toml
        [project.entry-points."paseo.store"]
        mystore = "my_package:MyStore"

    then ``{"storage": {"driver": "mystore"}}`` in ``config.json``. Subclass
    ``paseo.testing.store_conformance.StoreConformance`` in the driver's tests: the suite the
    built-in ``json`` and ``sqlite`` drivers pass (durability, compare-and-set, pagination,
    label transactions).
    """

    name: str = ""
    """The driver name (its entry-point name)."""

    plugin_records: PluginRecordStore | None = None
    """Plugins' own records (:mod:`paseo_hookspecs.plugin_records`; optional): ``None`` on a
    store that keeps none, and then ``DaemonContext.plugin_records`` raises ``Unavailable``.
    (On :class:`Store`, not :class:`~paseo_hookspecs.store.Repositories`: the plugin-record
    module builds on :mod:`paseo_hookspecs.store`.)

    .. versionadded:: 2.1
    """

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

    def hold_background(self) -> None:
        """Called right after :meth:`open` by an opener that will call :meth:`serving`: work
        the store does in the background after open (the JSON driver's index check) waits for
        it rather than compete with the rest of the start."""

    async def serving(self) -> None:
        """The daemon is ready and serving: background work held by :meth:`hold_background`
        may start."""
