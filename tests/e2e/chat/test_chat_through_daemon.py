"""Chat rooms through the real daemon and the real ``paseo chat`` CLI, with the real Claude
Code (against the fake model server) as the agent that is mentioned and that posts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2e.daemon.harness import (
    CLI_TIMEOUT,
    TURN_TIMEOUT,
    RealDaemon,
    item_type,
    poll,
    provider_settings,
    timeline,
)

from paseo.testing.fake_model import FakeModelServer


def chat(daemon: RealDaemon, *args: str, check: bool = True) -> Any:
    result = daemon.cli("chat", *args, "-o", "json", check=check)
    return json.loads(result.stdout) if result.returncode == 0 else result


def start_plain(daemon: RealDaemon) -> None:
    daemon.configure({})
    daemon.start()


def test_rooms_lifecycle_wait_and_errors(daemon: RealDaemon) -> None:
    start_plain(daemon)
    room = chat(daemon, "create", "Standup", "--purpose", "daily")["room"]
    assert (room["name"], room["purpose"], room["messageCount"]) == ("Standup", "daily", 0)
    taken = chat(daemon, "create", "STANDUP", check=False)
    assert taken.returncode == 1
    assert "chat_room_name_taken" in taken.stderr
    assert "Traceback" not in taken.stderr

    first = chat(daemon, "post", "standup", "hello", "room")["message"]
    assert (first["authorAgentId"], first["body"]) == ("manual", "hello room")
    missing = chat(daemon, "post", "standup", "x", "--reply-to", "nope", check=False)
    assert "chat_message_not_found" in missing.stderr

    # `chat wait` started before a post returns with that post. `--after` names the newest
    # message: the waiter's request may reach the daemon after the post (a slow CLI start),
    # and the answer must be the same either way.
    waiter = subprocess.Popen(
        [
            *daemon.paseo,
            *("chat", "wait", room["id"], "--after", first["id"], "--timeout", "60s", "-o", "json"),
        ],
        env={**os.environ, "PASEO_HOME": str(daemon.home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        reply = chat(daemon, "post", "Standup", "a reply", "--reply-to", first["id"])["message"]
        out, err = waiter.communicate(timeout=CLI_TIMEOUT)
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert waiter.returncode == 0, err
    waited = json.loads(out)
    assert waited["timedOut"] is False
    assert [m["id"] for m in waited["messages"]] == [reply["id"]]
    assert reply["replyToMessageId"] == first["id"]
    timed_out = chat(daemon, "wait", "standup", "--timeout", "0.2s")
    assert timed_out == {"messages": [], "timedOut": True}

    read = chat(daemon, "read", "standup", "--limit", "1")
    assert [m["body"] for m in read["messages"]] == ["a reply"]
    assert read["hasMore"] is True
    older = chat(daemon, "read", "standup", "--before", reply["id"])
    assert [m["body"] for m in older["messages"]] == ["hello room"]
    assert chat(daemon, "inspect", "standup")["room"]["messageCount"] == 2
    table = daemon.cli("chat", "read", "standup").stdout.splitlines()
    assert [line.split("] ", 1)[1].split("  #")[0] for line in table] == [
        "manual: hello room",
        f"manual (re {first['id']}): a reply",
    ]
    assert "Standup" in daemon.cli("chat", "ls").stdout

    # Durable: a restarted daemon has the room and its messages.
    daemon.stop()
    daemon.start()
    again = chat(daemon, "read", room["id"])
    assert [m["id"] for m in again["messages"]] == [first["id"], reply["id"]]

    deleted = chat(daemon, "delete", "standup")["room"]
    assert deleted["id"] == room["id"]
    gone = chat(daemon, "inspect", room["id"], check=False)
    assert "chat_room_not_found" in gone.stderr
    assert chat(daemon, "ls")["rooms"] == []
    assert not (daemon.home / "chat" / "messages" / f"{room['id']}.json").exists()


def _claude(daemon: RealDaemon, fake: FakeModelServer, root: Path) -> None:
    settings = provider_settings("claude", fake, root / "programs")
    # The agent's Bash tool runs the real CLI of this venv.
    venv_bin = str(Path(sys.executable).parent)
    settings["env"]["PATH"] = os.pathsep.join([venv_bin, os.environ.get("PATH", "")])
    daemon.configure({"claude": settings})
    daemon.start()


def _user_messages(client: Any, agent_id: str) -> list[str]:
    return [
        e["event"]["item"]["text"]
        for e in timeline(client, agent_id)
        if item_type(e) == "user_message"
    ]


def test_mention_prompts_an_idle_agent_which_posts_as_itself(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    _claude(daemon, fake, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    room = chat(daemon, "create", "team")["room"]
    with daemon.client() as client:
        agent = client.call(
            "agent.create",
            {
                "provider": "claude",
                "cwd": str(work),
                "modeId": "bypassPermissions",
                "title": "helper",
            },
        )["agent"]
        client.call(
            "agent.wait",
            {"agentId": agent["id"], "timeout": TURN_TIMEOUT},
            timeout=TURN_TIMEOUT + 10,
        )

        # A mention by title prompts the idle agent with the message and the room's context.
        chat(daemon, "post", "team", "before the mention")
        posted = chat(daemon, "post", "team", "@helper please answer [[reply:pong-from-helper]]")
        assert posted["message"]["mentionAgentIds"] == [agent["id"]]

        def prompted() -> str | None:
            found = [t for t in _user_messages(client, agent["id"]) if "pong-from-helper" in t]
            return found[0] if found else None

        prompt = poll(prompted, timeout=TURN_TIMEOUT, what="the mention prompt")
        assert prompt.startswith('Chat mention from manual in room "team"')
        assert "before the mention" in prompt

        def answered() -> bool:
            return any(
                item_type(e) == "assistant_message"
                and "pong-from-helper" in e["event"]["item"]["text"]
                for e in timeline(client, agent["id"])
            )

        poll(answered, timeout=TURN_TIMEOUT, what="the agent's answer")
        client.call(
            "agent.wait",
            {"agentId": agent["id"], "timeout": TURN_TIMEOUT},
            timeout=TURN_TIMEOUT + 10,
        )

        # The agent's own `paseo chat post` (its Bash tool) is authored by the agent.
        chat(
            daemon,
            "post",
            "team",
            f"@{agent['id'][:8]} [[shell:paseo chat post {room['id']} agent-says-hi]]",
        )

        def agent_post() -> list[dict[str, Any]]:
            read = chat(daemon, "read", "team", "--agent", agent["id"])
            return list(read["messages"])

        mine = poll(agent_post, timeout=TURN_TIMEOUT, what="the agent's own post")
        assert [m["body"] for m in mine] == ["agent-says-hi"]
        assert mine[0]["authorAgentId"] == agent["id"]
