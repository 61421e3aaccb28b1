"""Attention and push through the real daemon: the scripted provider finishes turns, the push
plugin decides, the fake Expo service records what was pushed."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for
from paseo_hookspecs.errors import InvalidParams

from paseo.testing.fake_expo import FakeExpo

SCRIPTED_PLUGIN = Path(__file__).resolve().parent / "scripted_agent"

TOKEN = "ExponentPushToken[phone]"
GONE = "ExponentPushToken[uninstalled]"


@pytest.fixture
def expo() -> Iterator[FakeExpo]:
    with FakeExpo() as fake:
        yield fake


@pytest.fixture
def push_daemon(agent_daemon_factory: Callable[..., LiveDaemon], expo: FakeExpo) -> LiveDaemon:
    return agent_daemon_factory(
        {
            "plugins": {
                "scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)},
                "push": {"settings": {"endpoint": expo.url}},
            }
        }
    )


def _connect(daemon: LiveDaemon, client_id: str) -> Any:
    from paseo.client import SyncClient

    return SyncClient(home=daemon.home, client_id=client_id, client_type="sdk")


class Notices:
    """The in-app notices one connection received."""

    def __init__(self, client: Any) -> None:
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        client.on("client.attention", self._record)

    def _record(self, _method: str, params: dict[str, Any]) -> None:
        with self._lock:
            self.received.append(params)

    def for_agent(self, agent_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [n for n in self.received if n["agentId"] == agent_id]


def _run_turn(client: Any, workdir: Path, prompt: str = "hello") -> str:
    agent = client.call(
        "agent.create", {"provider": "scripted", "cwd": str(workdir), "initialPrompt": prompt}
    )["agent"]
    result = client.call("agent.wait", {"agentId": agent["id"], "timeout": 20}, timeout=30)
    assert result["outcome"] in ("idle", "error", "permission")
    agent_id: str = agent["id"]
    return agent_id


def test_with_no_client_watching_a_finished_turn_is_pushed(
    push_daemon: LiveDaemon, expo: FakeExpo, workdir: Path
) -> None:
    with _connect(push_daemon, "cli-1") as client:
        assert client.call("push.register", {"token": TOKEN}) == {"registered": True}
        assert client.call("push.register", {"token": TOKEN}) == {"registered": False}
        agent_id = _run_turn(client, workdir)
    (body,) = expo.wait_for_requests(1, timeout=20)
    (message,) = body
    assert message["to"] == TOKEN
    assert message["data"]["agentId"] == agent_id
    assert message["data"]["reason"] == "finished"


def test_an_unknown_token_format_is_refused_and_unregister_forgets(
    push_daemon: LiveDaemon,
) -> None:
    with _connect(push_daemon, "cli-1") as client:
        with pytest.raises(InvalidParams):
            client.call("push.register", {"token": "not-a-token"})
        client.call("push.register", {"token": TOKEN})
        assert client.call("push.unregister", {"token": TOKEN}) == {"removed": True}
        assert client.call("push.unregister", {"token": TOKEN}) == {"removed": False}
    assert json.loads((push_daemon.home / "push-tokens.json").read_text())["tokens"] == []


def test_a_client_viewing_the_agent_means_nothing_is_sent(
    push_daemon: LiveDaemon, expo: FakeExpo, workdir: Path
) -> None:
    with _connect(push_daemon, "app-1") as client:
        notices = Notices(client)
        client.call("push.register", {"token": TOKEN})
        viewed = client.call(
            "agent.create", {"provider": "scripted", "cwd": str(workdir), "title": "viewed"}
        )["agent"]["id"]
        client.call(
            "client.heartbeat", {"deviceType": "web", "focusedAgentId": viewed, "visible": True}
        )
        client.call("agent.send", {"agentId": viewed, "text": "hello"})
        client.call("agent.wait", {"agentId": viewed, "timeout": 20}, timeout=30)
        # A second agent nobody views: its notice reaches this client, the most recent one,
        # and arrives after the first agent's attention was decided.
        other = _run_turn(client, workdir)
        wait_for(lambda: notices.for_agent(other), what="the in-app notice of the other agent")
        assert notices.for_agent(viewed) == []
        (notice,) = notices.for_agent(other)
        assert notice["reason"] == "finished"
    assert expo.requests == []


def test_an_unwatched_agent_goes_in_app_to_the_most_recent_client(
    push_daemon: LiveDaemon, expo: FakeExpo, workdir: Path
) -> None:
    with _connect(push_daemon, "older") as older, _connect(push_daemon, "newer") as newer:
        old_notices, new_notices = Notices(older), Notices(newer)
        older.call("push.register", {"token": TOKEN})
        older.call("client.heartbeat", {"deviceType": "web", "visible": True})
        newer.call("client.heartbeat", {"deviceType": "desktop", "visible": True})
        agent_id = _run_turn(older, workdir, "[[fail:boom]]")
        wait_for(lambda: new_notices.for_agent(agent_id), what="the in-app notice")
        assert new_notices.for_agent(agent_id)[0]["reason"] == "error"
        assert old_notices.for_agent(agent_id) == []
    assert expo.requests == []


def test_tokens_expo_reports_unregistered_are_removed_from_push_tokens_json(
    push_daemon: LiveDaemon, expo: FakeExpo, workdir: Path
) -> None:
    expo.unregistered.add(GONE)
    tokens_file = push_daemon.home / "push-tokens.json"
    with _connect(push_daemon, "cli-1") as client:
        client.call("push.register", {"token": TOKEN})
        client.call("push.register", {"token": GONE})
        _run_turn(client, workdir)
    (body,) = expo.wait_for_requests(1, timeout=20)
    assert sorted(m["to"] for m in body) == sorted([TOKEN, GONE])
    wait_for(
        lambda: json.loads(tokens_file.read_text())["tokens"] == [TOKEN],
        what="the unregistered token to leave push-tokens.json",
    )


def test_a_failed_turn_is_never_pushed(
    push_daemon: LiveDaemon, expo: FakeExpo, workdir: Path
) -> None:
    with _connect(push_daemon, "cli-1") as client:
        client.call("push.register", {"token": TOKEN})
        failed = _run_turn(client, workdir, "[[fail:boom]]")
        finished = _run_turn(client, workdir)
    # The finished agent's push comes after the failed agent's attention was decided.
    expo.wait_for_requests(1, timeout=20)
    assert [m["data"]["agentId"] for m in expo.messages] == [finished]
    assert failed != finished


def test_a_permission_request_with_no_client_watching_is_pushed(
    push_daemon: LiveDaemon, expo: FakeExpo, workdir: Path
) -> None:
    with _connect(push_daemon, "cli-1") as client:
        client.call("push.register", {"token": TOKEN})
        agent_id = _run_turn(client, workdir, "[[write:out.txt:x]]")
    (body,) = expo.wait_for_requests(1, timeout=20)
    (message,) = body
    assert message["data"] == {
        "agentId": agent_id,
        "reason": "permission",
        "serverId": message["data"]["serverId"],
    }
    assert message["data"]["serverId"].startswith("srv_")
    assert message["body"] == "Needs your permission"
