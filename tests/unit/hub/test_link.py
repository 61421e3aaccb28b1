"""The direct socket: reconnects with backoff on every failure, stops for good on revocation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers.hub_agents import FAST, Agents, run, service
from paseo_hub.link import STOP_GRACE, backoff_delay, stop_grace
from paseo_hub.relationship import FILE_NAME
from paseo_hub.service import HubService

from paseo.testing.fake_hub import FakeHub


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "paseo-home"
    path.mkdir()
    return path


async def connected(hub: FakeHub, home: Path) -> tuple[HubService, str]:
    hub_service = service(home, Agents())
    status = await hub_service.connect(hub.url, hub.issue_token())
    assert status.state == "connected"
    assert status.daemonId is not None
    return hub_service, status.daemonId


@pytest.mark.parametrize(("code", "reason"), [(4001, "replaced"), (1001, "server shutdown")])
def test_replaced_and_going_away_reconnect(home: Path, code: int, reason: str) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home)
            await hub.wait_connected(daemon_id)
            hub.close_socket(daemon_id, code, reason)
            await hub.wait_connected(daemon_id, after=1)
            async with asyncio.timeout(10):
                await hub_service.wait_for_state("connected")
            await hub_service.stop()

    run(body())


def test_refused_upgrades_back_off_then_connect(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home)
            hub.socket_faults = [503, "close", 502]
            hub.close_socket(daemon_id)
            async with asyncio.timeout(10):
                status = await hub_service.wait_for_state("reconnecting")
                assert status.lastError is not None
                await hub.wait_connected(daemon_id, after=1)
                await hub_service.wait_for_state("connected")
            assert hub.socket_attempts[daemon_id] == 5
            await hub_service.stop()

    run(body())


@pytest.mark.parametrize(
    ("value", "expected"), [(None, STOP_GRACE), ("0.5", 0.5), ("0", STOP_GRACE), ("x", STOP_GRACE)]
)
def test_the_close_grace_comes_from_the_environment_when_it_is_a_positive_number(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: float
) -> None:
    if value is not None:
        monkeypatch.setenv("PASEO_HUB_CLOSE_TIMEOUT", value)
    assert stop_grace() == expected


def test_pings_detect_a_hub_that_stops_answering(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A frozen Hub never sends its close frame: the dropped socket waits out the close grace
    # (5 s by default) before the link reconnects. What is proven here is the ping's detection.
    monkeypatch.setenv("PASEO_HUB_CLOSE_TIMEOUT", "0.5")

    async def body() -> None:
        async with FakeHub() as hub:
            settings = FAST.model_copy(update={"pingInterval": 0.2, "pingTimeout": 0.3})
            hub_service = service(home, Agents(), settings)
            status = await hub_service.connect(hub.url, hub.issue_token())
            assert status.daemonId is not None
            await hub.wait_connected(status.daemonId)
            hub.freeze(status.daemonId)
            async with asyncio.timeout(10):
                dropped = await hub_service.wait_for_state("reconnecting")
                await hub.wait_connected(status.daemonId, after=1)
            assert dropped.lastError is not None
            assert "1011" in dropped.lastError or "1006" in dropped.lastError
            await hub_service.stop()

    run(body())


def test_a_4403_close_revokes_for_good(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home)
            link = hub_service.link
            assert link is not None
            hub.revoke(daemon_id)
            async with asyncio.timeout(10):
                status = await hub_service.wait_for_state("revoked")
                await link.stop()  # returns at once: the loop already ended
            assert status.lastError == "the Hub closed the socket with 4403 (revoked)"
            assert status.daemonId == daemon_id
            assert status.hubOrigin == hub.url
            assert status.scopes == ["hub.execution.*"]
            saved = json.loads((home / FILE_NAME).read_text())
            assert saved["state"] == "revoked"
            assert "credential" not in saved
            assert "transport" not in saved
            assert saved["revocation"]["reason"] == status.lastError
            assert hub.socket_attempts[daemon_id] == 1  # no dial after the revocation
            await hub_service.stop()

    run(body())


def test_an_upgrade_refused_with_403_revokes_at_startup(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            first, daemon_id = await connected(hub, home)
            await first.stop()
            hub.revoke(daemon_id)  # revoked in the dashboard while the daemon was down
            second = service(home, Agents())
            await second.start()
            async with asyncio.timeout(10):
                status = await second.wait_for_state("revoked")
            assert status.lastError == "the Hub refused the daemon credential (HTTP 403)"
            assert "credential" not in json.loads((home / FILE_NAME).read_text())
            third = service(home, Agents())
            await third.start()  # a revoked relationship never dials again
            assert third.status().state == "revoked"
            assert third.link is None
            assert hub.socket_attempts[daemon_id] == 2
            await second.stop()

    run(body())


def test_a_revoked_relationship_can_be_replaced_by_a_new_connect(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home)
            hub.revoke(daemon_id)
            async with asyncio.timeout(10):
                await hub_service.wait_for_state("revoked")
            status = await hub_service.connect(hub.url, hub.issue_token())
            assert status.state == "connected"
            assert status.daemonId != daemon_id
            await hub_service.stop()

    run(body())


def test_backoff_is_exponential_capped_and_jittered() -> None:
    assert backoff_delay(0, 1.0, 60.0, lambda: 0.0) == 0.5
    assert backoff_delay(0, 1.0, 60.0, lambda: 1.0) == 1.0
    assert backoff_delay(3, 1.0, 60.0, lambda: 1.0) == 8.0
    assert backoff_delay(10, 1.0, 60.0, lambda: 1.0) == 60.0
    assert backoff_delay(10_000, 1.0, 60.0, lambda: 0.0) == 30.0
