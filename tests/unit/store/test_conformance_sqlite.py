"""The store conformance suite on the built-in SQLite driver."""

from __future__ import annotations

from paseo.testing.store_conformance import StoreConformance


class TestSqliteStoreConformance(StoreConformance):
    driver = "sqlite"
