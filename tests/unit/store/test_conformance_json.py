"""The store conformance suite on the built-in JSON-file driver."""

from __future__ import annotations

from paseo.testing.store_conformance import StoreConformance


class TestJsonStoreConformance(StoreConformance):
    driver = "json"
