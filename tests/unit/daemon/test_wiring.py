"""The composition root describes every kernel method group without a running daemon; the
adapters it builds that way answer ``unavailable`` instead of reaching a missing service."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from paseo_hookspecs.errors import Unavailable

from paseo.daemon.wiring import schema_groups, schema_notifications


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
