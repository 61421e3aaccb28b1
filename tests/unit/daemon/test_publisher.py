"""The publisher services get from the composition root: it drops events before the RPC server
exists, remembers streams declared early, and forwards everything once attached."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paseo.daemon.publisher import ForwardingPublisher


class _Server:
    def __init__(self) -> None:
        self.streams: dict[str, frozenset[str]] = {}
        self.published: list[tuple[str, str, dict[str, Any]]] = []

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        self.streams.setdefault(name, access)

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        self.published.append((stream, method, dict(payload)))


def test_early_streams_are_declared_on_attach_and_early_events_dropped() -> None:
    publisher = ForwardingPublisher()
    publisher.register_stream("workspaces", frozenset({"local"}))
    publisher.publish("workspaces", "workspace.changed", {"n": 1})
    server = _Server()
    publisher.attach(server)  # type: ignore[arg-type]
    assert server.streams == {"workspaces": frozenset({"local"})}
    assert server.published == []
    publisher.register_stream("agents", frozenset({"local", "remote"}))
    publisher.publish("workspaces", "workspace.changed", {"n": 2})
    assert server.streams["agents"] == frozenset({"local", "remote"})
    assert server.published == [("workspaces", "workspace.changed", {"n": 2})]
