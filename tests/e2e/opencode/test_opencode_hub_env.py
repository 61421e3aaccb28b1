"""A Hub create's ``env`` with the real pinned OpenCode: OpenCode runs an agent's tools inside
its server, so the agent given variables gets a server of its own started with them, and the
common server (the local agent beside it) never sees them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, timeline
from e2e.hub.test_hub_through_daemon import WITHIN, cli, status
from e2e.opencode.env import opencode_env
from helpers.agents_env import agent_binary

from paseo.testing.fake_hub import FakeHub
from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

PROBE = "opencode-hub-probe-31"


def _serve_envs(daemon: RealDaemon) -> list[dict[str, str]]:
    found = []
    for process in daemon.processes():
        try:
            if "serve" in process.cmdline():
                found.append(process.environ())
        except OSError:
            continue
    return found


def test_a_hub_env_reaches_only_its_own_opencode_server(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    env = opencode_env(fake.url, tmp_path / "opencode")
    daemon.configure({"opencode": {"command": [str(agent_binary("opencode"))], "env": env}})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    daemon.cli(
        "run", "--provider", "opencode", "--cwd", str(work), "--title", "local",
        "--wait-timeout", f"{TURN_TIMEOUT:.0f}s", "[[reply:local]]",
    )  # fmt: skip

    async def scenario() -> str:
        async with FakeHub() as hub:
            await cli(daemon, "hub", "connect", hub.url, "--token", hub.issue_token())
            daemon_id = (await status(daemon))["daemonId"]
            await hub.wait_connected(daemon_id, within=WITHIN)
            answer = await hub.create(
                daemon_id,
                provider="opencode",
                prompt="[[shell:echo probe=$HUB_PROBE]]",
                cwd=str(work),
                env={"HUB_PROBE": PROBE},
                within=TURN_TIMEOUT,
            )
            assert answer["success"] is True, answer
            return str(answer["agentId"])

    agent_id = asyncio.run(asyncio.wait_for(scenario(), 3 * TURN_TIMEOUT))
    with daemon.client() as client:

        def quoted() -> list[str]:
            # OpenCode may ask before running the command: allow it.
            pending: list[dict[str, Any]] = client.call(
                "agent.permissions.list", {"agentId": agent_id}
            )["requests"]
            for request in pending:
                client.call(
                    "agent.permissions.respond",
                    {
                        "agentId": agent_id,
                        "requestId": request["request"]["id"],
                        "behavior": "allow",
                    },
                )
            events = [json.dumps(e["event"]) for e in timeline(client, agent_id)]
            return [e for e in events if "tool said:" in e]

        said = poll(quoted, timeout=TURN_TIMEOUT, what="the model quoting the command's output")
        assert any(f"probe={PROBE}" in text for text in said), said
    envs = _serve_envs(daemon)
    assert len(envs) == 2, envs
    assert sorted(e.get("HUB_PROBE", "") for e in envs) == ["", PROBE]
