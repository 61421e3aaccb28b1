"""Disconnect: stop reconnecting, revoke while serving the socket, persist ``disconnecting``
and retry across restarts while the Hub is away; ``--force`` drops local authority now."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers.hub_agents import Agents, run, service
from paseo_hub.relationship import FILE_NAME
from paseo_hub.service import FORCE_WARNING, HubService

from paseo.testing.fake_hub import FakeHub


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "paseo-home"
    path.mkdir()
    return path


async def connected(hub: FakeHub, home: Path, agents: Agents) -> tuple[HubService, str]:
    hub_service = service(home, agents)
    status = await hub_service.connect(hub.url, hub.issue_token())
    assert status.state == "connected"
    assert status.daemonId is not None
    await hub.wait_connected(status.daemonId)
    return hub_service, status.daemonId


def test_disconnect_answers_the_hubs_interrupt_then_forgets(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            agents = Agents()
            hub_service, daemon_id = await connected(hub, home, agents)
            answer = await hub.create(daemon_id, prompt="p", cwd="/repo")
            status = await hub_service.disconnect()
            assert status.state == "not_connected"
            assert status.warning is None
            assert hub.daemons[daemon_id].revoked
            # The Hub interrupted the live execution before it confirmed, over the same socket.
            controls = [
                m["payload"] for m in hub.daemons[daemon_id].messages
                if m["type"] == "hub.execution.control.response"
            ]
            assert controls[0]["action"] == "interrupt"
            assert controls[0]["executionId"] == answer["executionId"]
            assert agents.agents[answer["agentId"]].status == "idle"
            assert not (home / FILE_NAME).exists()
            assert hub.socket_attempts[daemon_id] == 1
            assert hub_service.status().state == "not_connected"  # the 4403 was expected
            await hub_service.stop()

    run(body())


def test_an_offline_hub_leaves_disconnecting_that_survives_restarts(home: Path) -> None:
    async def body() -> None:
        hub = FakeHub()
        await hub.start()
        hub_service, daemon_id = await connected(hub, home, Agents())
        await hub.stop()
        status = await hub_service.disconnect()
        assert status.state == "disconnecting"
        assert status.warning is not None
        assert "will be retried" in status.warning
        saved = json.loads((home / FILE_NAME).read_text())
        assert saved["state"] == "disconnecting"
        assert saved["credential"]["secret"]  # still needed to authenticate the DELETE
        await hub_service.stop()
        restarted = service(home, Agents())
        await restarted.start()
        assert restarted.status().state == "disconnecting"
        assert restarted.link is None  # never a Hub socket while disconnecting
        attempts = dict(hub.socket_attempts)
        await hub.start()  # the Hub comes back on the same port
        async with asyncio.timeout(10):
            await restarted.wait_for_state("not_connected")
        assert hub.daemons[daemon_id].revoked
        assert hub.socket_attempts == attempts
        assert not (home / FILE_NAME).exists()
        await restarted.stop()
        await hub.stop()

    run(body())


def test_force_drops_local_authority_at_once_and_warns(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home, Agents())
            status = await hub_service.disconnect(force=True)
            assert status.state == "not_connected"
            assert status.warning == FORCE_WARNING
            assert not (home / FILE_NAME).exists()
            assert not hub.daemons[daemon_id].revoked  # the Hub was not told
            await hub_service.stop()

    run(body())


def test_disconnect_without_a_relationship_is_a_no_op(home: Path) -> None:
    async def body() -> None:
        hub_service = service(home, Agents())
        await hub_service.start()
        status = await hub_service.disconnect()
        assert status.state == "not_connected"
        assert status.warning is None

    run(body())


def test_disconnect_clears_a_revoked_stub(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service, daemon_id = await connected(hub, home, Agents())
            hub.revoke(daemon_id)
            async with asyncio.timeout(10):
                await hub_service.wait_for_state("revoked")
            status = await hub_service.disconnect()
            assert status.state == "not_connected"
            assert not (home / FILE_NAME).exists()

    run(body())


def test_force_ends_a_pending_revocation(home: Path) -> None:
    async def body() -> None:
        hub = FakeHub()
        await hub.start()
        hub_service, daemon_id = await connected(hub, home, Agents())
        await hub.stop()
        assert (await hub_service.disconnect()).state == "disconnecting"
        assert not hub.daemons[daemon_id].revoked
        forced = await hub_service.disconnect(force=True)
        assert forced.state == "not_connected"
        assert forced.warning == FORCE_WARNING
        assert not (home / FILE_NAME).exists()
        await hub_service.stop()

    run(body())
