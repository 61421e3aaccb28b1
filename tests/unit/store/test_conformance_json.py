"""The store conformance suite on the built-in JSON-file driver."""

from __future__ import annotations

from pathlib import Path

from paseo_hookspecs.interfaces.store import Store
from paseo_store_json import JsonStore

from paseo.testing.store_conformance import StoreConformance


class TestJsonStoreConformance(StoreConformance):
    driver = "json"


class TestJsonStoreConformanceUncached(StoreConformance):
    """The whole suite again with no record cache: every read of a full record comes from its
    file, so whatever the cache would hide (a stale or half-written record) shows."""

    driver = JsonStore

    def make_store(self, home: Path) -> Store:
        return JsonStore(home, cache_records=0)
