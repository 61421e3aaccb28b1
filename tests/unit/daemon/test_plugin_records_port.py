"""``DaemonContext.plugin_records``: the kernel hands a plugin one collection of its namespace
from the open store, and says plainly when the store driver keeps none."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_store_json import JsonStore

from paseo.daemon.runtime import Daemon


def _daemon(store: Any) -> Daemon:
    # Only ``store`` is read: a stand-in for a started daemon.
    return cast(Daemon, SimpleNamespace(store=store))


def test_the_port_is_the_store_s_collection_of_that_namespace(tmp_path: Path) -> None:
    store = JsonStore(tmp_path)
    repository = Daemon.plugin_records(_daemon(store), "loops", "loops")
    assert (repository.namespace, repository.collection) == ("loops", "loops")
    assert repository is store.plugin_records.collection("loops", "loops")
    with pytest.raises(InvalidParams):
        Daemon.plugin_records(_daemon(store), "../agents", "x")


def test_a_store_without_plugin_records_is_named() -> None:
    store = SimpleNamespace(name="tiny", plugin_records=None)
    with pytest.raises(Unavailable, match="tiny store driver keeps no plugin records"):
        Daemon.plugin_records(_daemon(store), "loops", "loops")
