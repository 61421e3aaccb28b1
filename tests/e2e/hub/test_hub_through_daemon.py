"""The Hub relationship end to end: the real daemon process (with the built-in hub plugin and
the kernel's Hub host), the real Claude Code behind the fake model server, and the fake Hub.

The fake Hub runs on the test's event loop; the blocking ``paseo`` CLI runs in a worker thread
so the Hub keeps serving while the daemon talks to it. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, provider_settings

from paseo.testing.fake_hub import FakeHub
from paseo.testing.fake_model import FakeModelServer, RefusingProxy

WITHIN = 60.0


async def cli(daemon: RealDaemon, *args: str, check: bool = True) -> Any:
    return await asyncio.to_thread(daemon.cli, *args, check=check)


async def status(daemon: RealDaemon) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((await cli(daemon, "hub", "status", "-o", "json")).stdout)
    return result


def event_types(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"]["type"] if "event" in e else e["type"] for e in events]


def test_a_hub_create_runs_a_real_turn_and_reconciles_after_a_reconnect(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()

    async def scenario() -> None:
        async with FakeHub() as hub:
            # enroll → connected
            await cli(daemon, "hub", "connect", hub.url, f"--token={hub.issue_token()}")
            state = await status(daemon)
            assert state["state"] == "connected", state
            daemon_id = state["daemonId"]
            generation = await hub.wait_connected(daemon_id, within=WITHIN)

            # a Hub create runs a real turn; its events reach the Hub in order
            answer = await hub.create(
                daemon_id,
                prompt="hub-marker [[reply:hello from the hub agent]]",
                cwd=str(work),
                within=TURN_TIMEOUT,
            )
            assert answer["success"] is True, answer
            assert answer["toolPolicyApplied"] is True
            assert answer["error"] is None
            agent_id = answer["agentId"]
            execution = hub.executions[answer["executionId"]]

            def completed() -> bool:
                return "turn_completed" in event_types(execution.events)

            await hub.wait_for(completed, TURN_TIMEOUT)
            types = event_types(execution.events)
            assert types.index("turn_started") < types.index("turn_completed")
            assert types.count("turn_started") == 1

            # the record carries the relationship owner
            record = json.loads((await cli(daemon, "inspect", agent_id, "-o", "json")).stdout)
            assert record["agent"]["owner"] == {
                "kind": "daemon",
                "daemonId": daemon_id,
                "executionId": answer["executionId"],
            }

            # the socket drops → reconnect → the replayed create gets the same agent, no turn
            attempts = execution.create_attempts
            hub.close_socket(daemon_id)
            await hub.wait_connected(daemon_id, after=generation, within=WITHIN)
            await hub.wait_for(lambda: execution.create_attempts > attempts, WITHIN)
            await hub.wait_for(lambda: len(execution.responses) >= 2, WITHIN)
            replayed = execution.responses[-1]
            assert replayed["agentId"] == agent_id
            assert replayed["agent"]["status"] in ("idle", "running")
            again = await hub.create(
                daemon_id, prompt="ignored", cwd=str(work), execution_id=answer["executionId"]
            )
            assert again["agentId"] == agent_id
            assert event_types(execution.events).count("turn_started") == 1

            # a Hub session gets nothing outside hub.execution.*
            for kind in ("daemon.get_status.request", "send_agent_message_request"):
                denied = await hub.request(daemon_id, {"type": kind})
                assert denied.get("rpcError") is True, denied
                assert denied["code"] == "access_denied"

            # a local agent beside the Hub's never reaches the Hub
            local = await cli(
                daemon,
                "run",
                "--provider",
                "claude",
                "--cwd",
                str(work),
                "--title",
                "local",
                "--wait-timeout",
                str(int(TURN_TIMEOUT)),
                "local-marker [[reply:local only]]",
            )
            assert local.stdout == "local only\n"
            assert hub.violations == []
            assert all(e.agent_id in (None, agent_id) for e in hub.executions.values()), (
                "the Hub saw an agent it did not create"
            )

            # disconnect: the Hub confirms, the relationship is gone
            await cli(daemon, "hub", "disconnect")
            assert (await status(daemon))["state"] == "not_connected"

    asyncio.run(asyncio.wait_for(scenario(), 6 * TURN_TIMEOUT))


def test_a_turn_the_daemon_dies_in_is_replayed_once_and_disconnect_outlives_an_offline_hub(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    marker = "kill-marker"

    def prompts_with_marker() -> int:
        # The agent's own turns: its title is generated by an internal agent whose requests
        # quote the prompt too (they offer Claude Code's StructuredOutput tool).
        return sum(
            1
            for r in fake.model_requests()
            if marker in (r.prompt or "") and "StructuredOutput" not in r.tool_names
        )

    async def scenario() -> None:
        async with FakeHub() as hub:
            await cli(daemon, "hub", "connect", hub.url, f"--token={hub.issue_token()}")
            daemon_id = (await status(daemon))["daemonId"]
            generation = await hub.wait_connected(daemon_id, within=WITHIN)

            # the daemon is SIGKILLed while the initial turn streams
            answer = await hub.create(
                daemon_id,
                prompt=f"{marker} [[slow:20:0.5]] [[reply:replayed answer]]",
                cwd=str(work),
                within=TURN_TIMEOUT,
            )
            assert answer["success"] is True, answer
            execution = hub.executions[answer["executionId"]]
            await hub.wait_for(prompts_with_marker, TURN_TIMEOUT)
            intents = daemon.home / "hub-resume-intents.json"
            assert intents.exists()
            await asyncio.to_thread(daemon.kill)

            # restart: the relationship reconnects, the Hub re-sends the create, the same
            # agent is reloaded and the armed turn replayed exactly once
            await asyncio.to_thread(daemon.start)
            await hub.wait_connected(daemon_id, after=generation, within=WITHIN)
            await hub.wait_for(lambda: len(execution.responses) >= 2, WITHIN)
            replayed = execution.responses[-1]
            assert replayed["agentId"] == answer["agentId"]
            assert replayed["agent"]["status"] in ("idle", "running"), replayed

            def finished() -> bool:
                return event_types(execution.events).count("turn_completed") >= 1

            await hub.wait_for(finished, TURN_TIMEOUT)
            assert prompts_with_marker() == 2
            await hub.wait_for(lambda: not intents.exists(), WITHIN)

            # disconnect with the Hub offline: `disconnecting` survives a restart
            await hub.stop()
            result = await cli(daemon, "hub", "disconnect", check=False)
            assert (await status(daemon))["state"] == "disconnecting", result.stdout
            await asyncio.to_thread(daemon.stop)
            await asyncio.to_thread(daemon.start)
            assert (await status(daemon))["state"] == "disconnecting"
            attempts = hub.socket_attempts.get(daemon_id, 0)

            # the Hub comes back: the revocation lands, no socket was opened meanwhile
            await hub.start()
            await hub.wait_for(lambda: daemon_id in hub.revocations, WITHIN)

            async def forgotten() -> bool:
                return (await status(daemon))["state"] == "not_connected"

            for _ in range(int(WITHIN * 10)):
                if await forgotten():
                    break
                await asyncio.sleep(0.1)
            assert await forgotten()
            assert hub.socket_attempts.get(daemon_id, 0) == attempts

    asyncio.run(asyncio.wait_for(scenario(), 8 * TURN_TIMEOUT))


def test_a_4403_while_connected_revokes_for_good(daemon: RealDaemon) -> None:
    daemon.configure({})
    daemon.start()

    async def scenario() -> None:
        async with FakeHub() as hub:
            await cli(daemon, "hub", "connect", hub.url, f"--token={hub.issue_token()}")
            daemon_id = (await status(daemon))["daemonId"]
            await hub.wait_connected(daemon_id, within=WITHIN)
            attempts = hub.socket_attempts[daemon_id]
            hub.revoke(daemon_id)  # the socket closes with 4403

            state: dict[str, Any] = {}
            for _ in range(int(WITHIN * 10)):
                state = await status(daemon)
                if state["state"] == "revoked":
                    break
                await asyncio.sleep(0.1)
            assert state["state"] == "revoked", state
            assert state["daemonId"] == daemon_id
            assert state["lastError"]
            stored = json.loads((daemon.home / "hub-relationship.json").read_text())
            assert "credential" not in stored or not stored["credential"]
            # A restart does not dial a revoked relationship either.
            await asyncio.to_thread(daemon.stop)
            await asyncio.to_thread(daemon.start)
            assert (await status(daemon))["state"] == "revoked"
            assert hub.socket_attempts[daemon_id] == attempts

    asyncio.run(asyncio.wait_for(scenario(), 4 * WITHIN))


def test_a_branch_off_target_runs_the_agent_in_a_new_worktree(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    daemon.configure({"py-acp": provider_settings("py-acp", fake, tmp_path / "programs")})
    daemon.start()
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True, timeout=30)
    (repo / "README").write_text("hello\n")
    subprocess.run([*git, "add", "README"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True, timeout=30)

    async def scenario() -> None:
        async with FakeHub() as hub:
            await cli(daemon, "hub", "connect", hub.url, f"--token={hub.issue_token()}")
            daemon_id = (await status(daemon))["daemonId"]
            await hub.wait_connected(daemon_id, within=WITHIN)
            answer = await hub.create(
                daemon_id,
                prompt="hello",
                cwd=str(repo),
                provider="py-acp",
                worktree={"type": "branch-off", "newBranch": "hub-work"},
                within=TURN_TIMEOUT,
            )
            assert answer["success"] is True, answer
            record = json.loads(
                (await cli(daemon, "inspect", answer["agentId"], "-o", "json")).stdout
            )["agent"]
            assert Path(record["cwd"]) != repo
            assert (Path(record["cwd"]) / "README").read_text() == "hello\n"
            branches = await asyncio.to_thread(
                subprocess.run,
                [*git, "branch", "--list", "hub-work"],
                capture_output=True,
                text=True,
                check=True,
                timeout=30,
            )
            assert "hub-work" in branches.stdout

    asyncio.run(asyncio.wait_for(scenario(), 4 * WITHIN))
