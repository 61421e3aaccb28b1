"""The store conformance suite: one set of pytest tests every ``paseo.store`` driver must pass.

Usage from a third-party store plugin's test suite (a file pytest collects)::

    from paseo.testing.store_conformance import StoreConformance

    class TestMyStore(StoreConformance):
        driver = MyStore            # the Store subclass, or its entry-point name ("json")

Each test builds a fresh driver on an empty home under pytest's ``tmp_path`` with
``driver(home, settings)``, runs ``await store.open()``, exercises the contract of
:mod:`paseo_hookspecs.store` and closes every store it opened. Tests are plain synchronous pytest
functions that drive their own event loop, so no async pytest plugin is needed. Override
:meth:`StoreConformance.make_store` to construct the driver differently (settings, a server); set
the class attributes ``settings``, ``concurrency`` or ``test_timeout`` to tune it.

The suite covers every repository method (reads, inserts, compare-and-set updates with their
``Conflict`` / ``NotFound`` / ``InvalidParams`` outcomes and nothing written on error, deletes),
agent filters, tombstones and the trash's purge transaction and cleanup queue, timeline windows,
schedule runs, exact-root project idempotence, the label catalog
and its assignment rewrites, plugins' own records (``plugin_records``, when the driver keeps
them), and then the properties that only show under load or restart:
concurrent compare-and-set writers lose no update, concurrent exact-root opens create one project,
pages stay stable while rows are inserted and deleted, and a store reopened on the same home holds
exactly what was acknowledged, with every field (including unknown ones) intact.

The record factories (:func:`agent_data` and friends), :func:`snapshot` and
:func:`collect_pages` are public so crash harnesses and benchmarks build the same records.

The suite is one mixin per repository (``agents``, ``timeline``, ``schedules``, …) plus the
load and restart properties, each in its own module of this package, combined here into
:class:`StoreConformance`.
"""

from __future__ import annotations

from paseo.testing.store_conformance.agents import AgentTests
from paseo.testing.store_conformance.base import StoreSuite, store_test
from paseo.testing.store_conformance.concurrency import ConcurrencyTests
from paseo.testing.store_conformance.labels import LabelTests
from paseo.testing.store_conformance.lazy import LazyReadTests
from paseo.testing.store_conformance.lifecycle import LifecycleTests
from paseo.testing.store_conformance.pagination import PaginationStabilityTests
from paseo.testing.store_conformance.plugin_records import PluginRecordTests
from paseo.testing.store_conformance.projects import ProjectTests
from paseo.testing.store_conformance.reading import collect_pages, snapshot
from paseo.testing.store_conformance.records import (
    agent_data,
    iso,
    managed_process_data,
    plugin_source_data,
    project_data,
    schedule_data,
    timeline_entry_data,
    workspace_data,
)
from paseo.testing.store_conformance.schedules import ScheduleTests
from paseo.testing.store_conformance.small import (
    ManagedProcessTests,
    PluginSourceTests,
    PushTokenTests,
)
from paseo.testing.store_conformance.timeline import TimelineTests
from paseo.testing.store_conformance.trash import TrashTests, cleanup_item_data
from paseo.testing.store_conformance.usage import UsageTests, usage_data
from paseo.testing.store_conformance.workspaces import WorkspaceTests

__all__ = [
    "StoreConformance",
    "StoreSuite",
    "agent_data",
    "cleanup_item_data",
    "collect_pages",
    "iso",
    "managed_process_data",
    "plugin_source_data",
    "project_data",
    "schedule_data",
    "snapshot",
    "store_test",
    "timeline_entry_data",
    "usage_data",
    "workspace_data",
]


class StoreConformance(
    LifecycleTests,
    AgentTests,
    LazyReadTests,
    TimelineTests,
    ScheduleTests,
    ProjectTests,
    WorkspaceTests,
    LabelTests,
    PushTokenTests,
    ManagedProcessTests,
    PluginSourceTests,
    TrashTests,
    UsageTests,
    PluginRecordTests,
    ConcurrencyTests,
    PaginationStabilityTests,
):
    """Subclass in a ``Test*`` class and set :attr:`~StoreSuite.driver` to run the whole suite
    on a driver (the hooks and tuning attributes are :class:`StoreSuite`'s)."""
