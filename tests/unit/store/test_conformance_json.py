"""The store conformance suite on the built-in JSON-file driver."""

from __future__ import annotations

from pathlib import Path

from paseo_hookspecs.interfaces.store import Store
from paseo_store_json import JsonStore

from paseo.testing.store_conformance import StoreConformance


class TestJsonStoreConformance(StoreConformance):
    driver = "json"


class TestJsonStoreConformanceUncached(StoreConformance):
    """The whole suite again with no record cache and no parsed timeline entries: every read of
    a full record or a timeline comes from its file, so whatever the cache would hide (a stale
    or half-written record, a wrong line offset) shows."""

    driver = JsonStore

    def make_store(self, home: Path) -> Store:
        return JsonStore(home, cache_records=0, cache_timeline_bytes=0)
