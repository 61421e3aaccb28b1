"""Enrollment: persisted before the POST, retried with the same key and token, dropped on a
refusal, validated before ``active``; a restart reconnects without enrolling again."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from helpers.hub_agents import FAST, PUBLIC_KEY, Agents, run, service
from paseo_hookspecs.errors import Conflict, InvalidParams, Unavailable
from paseo_hub.relationship import (
    FILE_NAME,
    KEYPAIR_FILE,
    check_socket_url,
    credential_verifier,
    normalize_origin,
)

from paseo.testing.fake_hub import FakeHub


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "paseo-home"
    path.mkdir()
    return path


def record(home: Path) -> dict[str, Any]:
    path = home / FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def test_connect_enrolls_and_opens_the_socket(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service = service(home, Agents())
            await hub_service.start()
            status = await hub_service.connect(hub.url + "/", hub.issue_token())
            assert status.state == "connected"
            assert status.hubOrigin == hub.url
            assert status.scopes == ["hub.execution.*"]
            assert status.daemonId in hub.daemons
            assert status.slug == hub.daemons[status.daemonId].slug
            saved = record(home)
            assert saved["state"] == "active"
            assert saved["relationship"]["daemonId"] == status.daemonId
            assert saved["transport"] == {
                "kind": "direct_websocket",
                "webSocketUrl": f"ws://127.0.0.1:{hub.port}/api/daemons/socket",
            }
            assert "enrollment" not in saved  # the one-time token is dropped once used
            verifier = hub.daemons[status.daemonId].verifier
            assert verifier == credential_verifier(saved["credential"]["secret"])
            assert hub.violations == []
            await hub_service.stop()

    run(body())


def test_the_relationship_is_on_disk_before_the_hub_answers(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub.enroll_faults = ["hang"]
            token = hub.issue_token()
            settings = FAST.model_copy(update={"connectWait": 0.5, "httpTimeout": 30.0})
            hub_service = service(home, Agents(), settings)
            status = await hub_service.connect(hub.url, token)
            assert status.state == "connecting"
            saved = record(home)
            assert saved["state"] == "pending"
            assert saved["enrollment"] == {"token": token}
            assert saved["credential"]["secret"]
            assert saved["relationship"]["hubOrigin"] == hub.url
            # The daemon's public key, as daemon-keypair.json holds it.
            identity = {"serverId": "srv_test", "daemonPublicKey": PUBLIC_KEY}
            assert saved["identity"] == identity
            await hub_service.stop()

    run(body())


@pytest.mark.parametrize("fault", ["drop", "close", 503, 429, 408])
def test_a_lost_answer_is_retried_with_the_same_key_and_token(
    home: Path, fault: str | int
) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub.enroll_faults = [fault]
            hub_service = service(home, Agents())
            status = await hub_service.connect(hub.url, hub.issue_token())
            assert status.state == "connected", status
            assert hub.enroll_requests == 2
            assert list(hub.daemons) == [status.daemonId]
            await hub_service.stop()

    run(body())


def test_a_hub_that_hangs_leaves_a_clear_status(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub.enroll_faults = ["hang"] * 5
            settings = FAST.model_copy(update={"connectWait": 1.5, "httpTimeout": 0.3})
            hub_service = service(home, Agents(), settings)
            status = await hub_service.connect(hub.url, hub.issue_token())
            assert status.state == "connecting"
            assert status.lastError == "the Hub did not answer in time"
            assert record(home)["state"] == "pending"
            await hub_service.stop()

    run(body())


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("junk", "the Hub answered enroll with an invalid body: not JSON"),
        (409, "the Hub refused the enrollment (HTTP 409)"),
        (400, "the Hub refused the enrollment (HTTP 400)"),
    ],
)
def test_a_refusal_or_junk_drops_the_pending_record(
    home: Path, fault: str | int, reason: str
) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub.enroll_faults = [fault]
            hub_service = service(home, Agents())
            status = await hub_service.connect(hub.url, hub.issue_token())
            assert status.state == "not_connected"
            assert status.lastError is not None
            assert status.lastError.startswith(reason)

    run(body())
    # No record, and no temp file left behind either (the daemon's keypair is its own).
    assert [p.name for p in home.iterdir()] == [KEYPAIR_FILE]


def test_an_unknown_token_is_refused_with_a_clear_message(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service = service(home, Agents())
            status = await hub_service.connect(hub.url, "not-a-token")
            assert status.state == "not_connected"
            assert status.lastError is not None
            assert "enrollment token" in status.lastError
            assert not (home / FILE_NAME).exists()

    run(body())


def test_a_restart_reconnects_without_enrolling_again(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            first = service(home, Agents())
            status = await first.connect(hub.url, hub.issue_token())
            await first.stop()
            second = service(home, Agents())
            await second.start()
            async with asyncio.timeout(10):
                again = await second.wait_for_state("connected")
            assert again.daemonId == status.daemonId
            assert hub.enroll_requests == 1
            assert hub.daemons[status.daemonId].generation == 2
            await second.stop()

    run(body())


def test_a_pending_enrollment_resumes_after_a_restart(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub.enroll_faults = ["drop"]
            settings = FAST.model_copy(
                update={"connectWait": 0.2, "backoffInitial": 30.0, "backoffMax": 60.0}
            )
            first = service(home, Agents(), settings)
            await first.connect(hub.url, hub.issue_token())
            await first.stop()
            assert record(home)["state"] == "pending"
            second = service(home, Agents())
            await second.start()
            async with asyncio.timeout(10):
                status = await second.wait_for_state("connected")
            assert list(hub.daemons) == [status.daemonId]
            await second.stop()

    run(body())


def test_connect_refuses_bad_urls_and_a_second_relationship(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service = service(home, Agents())
            for url in ("ftp://hub", "http://user:pw@hub", "http://hub/?x=1", "hub.example"):
                with pytest.raises(InvalidParams):
                    await hub_service.connect(url, "t")
            await hub_service.connect(hub.url, hub.issue_token())
            with pytest.raises(Conflict):
                await hub_service.connect(hub.url, hub.issue_token())
            await hub_service.stop()

    run(body())


def test_origins_are_normalised() -> None:
    assert normalize_origin("HTTPS://Hub.Example.com:443/dash") == "https://hub.example.com"
    assert normalize_origin("http://127.0.0.1:3000") == "http://127.0.0.1:3000"


@pytest.mark.parametrize(
    "url",
    [
        "http://hub.example.com/api/daemons/socket",
        "ws://hub.example.com/api/daemons/socket",
        "wss://other.example.com/api/daemons/socket",
        "wss://hub.example.com:8443/api/daemons/socket",
        "wss://hub.example.com/api/daemons/socket#frag",
        None,
    ],
)
def test_unsafe_socket_urls_are_refused(url: str | None) -> None:
    with pytest.raises(ValueError, match="webSocketUrl"):
        check_socket_url(url, "https://hub.example.com")


def test_the_verifier_is_unpadded_base64url_sha256() -> None:
    # sha256("abc") = ba7816bf…; its base64url without padding:
    assert credential_verifier("abc") == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"


def test_an_unreadable_keypair_refuses_the_connect_and_writes_nothing(home: Path) -> None:
    async def body() -> None:
        async with FakeHub() as hub:
            hub_service = service(home, Agents())
            (home / KEYPAIR_FILE).write_text('{"v": 2, "publicKeyB64": "short"}')
            with pytest.raises(Unavailable, match="restart the daemon"):
                await hub_service.connect(hub.url, hub.issue_token())
            assert not (home / FILE_NAME).exists()
            assert hub.enroll_requests == 0
            await hub_service.stop()

    run(body())
