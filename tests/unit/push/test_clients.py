"""The heartbeat registry: bounded, forgets silent clients and closed connections."""

from __future__ import annotations

from typing import Any

from paseo_push.clients import ClientRegistry
from paseo_push.policy import ACTIVE_WINDOW, ClientState

NOW = 5_000.0


class Notifier:
    """An RPC context stand-in that records notifications (and may say it is closed)."""

    def __init__(self, connected: bool | None = None) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        if connected is not None:
            self.connected = connected

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))


def state(client_id: str, idle: float = 0.0) -> ClientState:
    return ClientState(client_id, "web", None, True, NOW - idle)


def test_the_latest_heartbeat_of_a_client_replaces_its_earlier_one() -> None:
    registry = ClientRegistry()
    first, second = Notifier(), Notifier()
    registry.heartbeat(state("c", idle=30), first, NOW)
    registry.heartbeat(state("c"), second, NOW)
    assert registry.states(NOW) == [state("c")]
    assert registry.notifier("c") is second


def test_the_registry_is_bounded_dropping_the_least_recently_heard() -> None:
    registry = ClientRegistry(limit=2)
    for name in ("a", "b", "c"):
        registry.heartbeat(state(name), Notifier(), NOW)
    assert [s.client_id for s in registry.states(NOW)] == ["b", "c"]


def test_silent_clients_and_closed_connections_are_forgotten() -> None:
    registry = ClientRegistry()
    registry.heartbeat(state("silent", idle=ACTIVE_WINDOW), Notifier(), NOW)
    registry.heartbeat(state("closed"), Notifier(connected=False), NOW)
    registry.heartbeat(state("open"), Notifier(connected=True), NOW)
    assert [s.client_id for s in registry.states(NOW)] == ["open"]
    assert registry.notifier("closed") is None
