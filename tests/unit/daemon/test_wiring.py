"""The composition root describes every kernel method group without a running daemon; the
adapters it builds that way answer ``unavailable`` instead of reaching a missing service."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.errors import Unavailable

from paseo.daemon.method_index import INDEX
from paseo.daemon.methods import kernel_groups
from paseo.daemon.wiring import schema_groups, schema_notifications
from paseo.services import ServiceRef


def test_schema_groups_cover_the_daemon_and_every_kernel_service() -> None:
    areas = {group.area for group in schema_groups()}
    assert {"server", "config", "project", "workspace", "worktree", "label", "agent"} <= areas
    names = [method.name for group in schema_groups() for method in group.methods]
    assert len(names) == len(set(names))
    assert "config.changed" in schema_notifications()


@pytest.mark.parametrize("method", ["workspace.list", "server.status", "project.list"])
def test_unbound_adapters_answer_unavailable(method: str) -> None:
    handler = next(
        m.handler for group in schema_groups() for m in group.methods if m.name == method
    )
    params: Any = None
    with pytest.raises(Unavailable):
        asyncio.run(handler(None, params))  # type: ignore[arg-type]


def test_the_method_index_is_the_lazily_loaded_groups_as_they_are() -> None:
    # A start registers these groups from the index alone: a method added, renamed or given
    # another access must be in it (a loaded method that differs is refused).
    from paseo.daemon.schema import method_index_source

    committed = (Path(__file__).parents[3] / "paseo" / "daemon" / "method_index.py").read_text()
    assert committed == method_index_source(), (
        "paseo/daemon/method_index.py is stale: run "
        "`python -m paseo.daemon.schema --method-index paseo/daemon/method_index.py`"
    )


def test_every_kernel_method_but_the_daemons_own_is_registered_lazily() -> None:
    eager = {
        method.name for group in kernel_groups(ServiceRef("daemon")) for method in group.methods
    }
    indexed = {
        name for groups in INDEX.values() for methods in groups.values() for name, _ in methods
    }
    every = {method.name for group in schema_groups() for method in group.methods}
    assert eager | indexed == every
    assert not eager & indexed


def test_the_built_in_plugins_lazy_groups_declare_what_they_load() -> None:
    # A plugin's stubs are what sessions are allowed from before the group is loaded: each
    # must name exactly the loaded group's methods, with the same access and `immediate`.
    from paseo_hookspecs.registration import LazyRpcMethodGroup

    from paseo.plugins import LoadPolicy, PaseoPluginManager

    manager = PaseoPluginManager(LoadPolicy(strict=True))
    manager.load_all()
    lazy = [g for _, g in manager.rpc_method_groups() if isinstance(g, LazyRpcMethodGroup)]
    assert "chat" in {group.area for group in lazy}
    for group in lazy:
        loaded = group.load()
        assert loaded.area == group.area
        assert [(m.name, m.access, m.immediate) for m in group.methods] == [
            (m.name, m.access, m.immediate) for m in loaded.methods
        ]
