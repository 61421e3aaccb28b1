"""A mention storm through the real daemon: two real Claude Code agents whose every turn posts
a message mentioning both (their Bash tool runs the real ``paseo chat post``) would ping-pong
for ever; the mention-chain depth limit (docs/chat.md) ends it after three rounds, and each
prompt that finds its agent busy waits for the turn to end instead of replacing it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e.chat.test_chat_through_daemon import _claude, _user_messages, chat
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, item_type, poll, timeline

from paseo.testing.fake_model import FakeModelServer

DEPTH_LIMIT = 3
"""paseo_chat.mentions.MAX_DEPTH, as docs/chat.md documents it."""


def test_two_agents_mentioning_each_other_stop_at_the_depth_limit(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    _claude(daemon, fake, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    room = chat(daemon, "create", "storm")["room"]
    # Each prompt quotes the message, so each agent reposts the same message: a chain that
    # never ends by itself.
    script = tmp_path / "storm.txt"
    message = f'@ping @pong [[shell:paseo chat post {room["id"]} "$(cat {script})"]]'
    script.write_text(message)
    with daemon.client() as client:
        agents: dict[str, str] = {}
        for title in ("ping", "pong"):
            created = client.call(
                "agent.create",
                {
                    "provider": "claude",
                    "cwd": str(work),
                    "modeId": "bypassPermissions",
                    "title": title,
                },
            )["agent"]
            agents[created["id"]] = title
            client.call(
                "agent.wait",
                {"agentId": created["id"], "timeout": TURN_TIMEOUT},
                timeout=TURN_TIMEOUT + 10,
            )
        chat(daemon, "post", "storm", message)

        def messages() -> list[dict[str, Any]]:
            return list(chat(daemon, "read", "storm", "--limit", "100")["messages"])

        def settled() -> list[dict[str, Any]] | None:
            found = messages()
            if len(found) < 1 + 2 * DEPTH_LIMIT:
                return None
            statuses = [
                client.call("agent.get", {"agentId": agent_id})["agent"]["lastStatus"]
                for agent_id in agents
            ]
            return found if statuses == ["idle", "idle"] else None

        poll(settled, timeout=TURN_TIMEOUT * 2 * DEPTH_LIMIT, what="the chain to reach its end")

        # The daemon decided, for each agent's last post, to prompt no one: the chain ended
        # because of the limit, not because the agents happened to be slow. Waited for as an
        # event; the quiet window after it only confirms that nothing else arrives.
        def stopped() -> bool:
            log = (daemon.home / "daemon.log").read_text(errors="replace")
            return log.count(f"room {room['id']}: mention chain depth {DEPTH_LIMIT} reached") == 2

        poll(stopped, timeout=TURN_TIMEOUT, what="the depth limit to stop both last posts")
        last = messages()[-1]
        quiet = chat(daemon, "wait", "storm", "--after", last["id"], "--timeout", "5s")
        assert quiet["timedOut"] is True, json.dumps(quiet["messages"], indent=2)

        found = messages()
        authors = [agents.get(m["authorAgentId"], m["authorAgentId"]) for m in found]
        assert authors.count("manual") == 1
        assert sorted(authors[1:]) == ["ping"] * DEPTH_LIMIT + ["pong"] * DEPTH_LIMIT
        for agent_id in agents:
            prompts = [t for t in _user_messages(client, agent_id) if "Chat mention from" in t]
            assert len(prompts) == DEPTH_LIMIT, prompts
            kinds = [item_type(e) for e in timeline(client, agent_id)]
            # A prompt that found the agent busy waited: no turn was cut short.
            assert "turn_canceled" not in kinds
