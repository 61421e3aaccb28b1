"""A hostile Hub against the real daemon: what the Hub sends is data, never a way to stop the
link, reach the user's terminal, steer an agent's environment or flood the daemon's log.

The fake Hub runs on the test's event loop; the blocking ``paseo`` CLI runs in a worker thread
so the Hub keeps serving while the daemon talks to it. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon
from helpers.waiting import wait_for

from paseo.testing.fake_hub import FakeHub

WITHIN = 60.0
HANG = "hang-acp"
"""A provider whose program never answers ACP's ``initialize``: its start always times out."""
START_TIMEOUT = "2"


@pytest.fixture
def daemon(paseo_home: Path) -> Iterator[LiveDaemon]:
    paseo_home.mkdir(parents=True, exist_ok=True)
    hang = {"extends": "acp", "label": "Hangs", "command": [sys.executable, "-c", _HANGS]}
    config = {"agents": {"providers": {HANG: hang}}}
    (paseo_home / "config.json").write_text(json.dumps(config))
    live = start_daemon(paseo_home, {"PASEO_AGENT_START_TIMEOUT": START_TIMEOUT})
    try:
        yield live
    finally:
        stop_daemon(live.home)
        kill_leftover(live.pid)


_HANGS = "import sys, time\nsys.stdin.read()\ntime.sleep(600)\n"


def paseo(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "paseo", *args],
        env={**os.environ, "PASEO_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=WITHIN,
        check=False,
    )


async def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(paseo, home, *args)


async def connect(hub: FakeHub, home: Path) -> tuple[str, subprocess.CompletedProcess[str]]:
    done = await cli(home, "hub", "connect", hub.url, f"--token={hub.issue_token()}")
    assert done.returncode == 0, done.stderr
    daemon_id = next(iter(hub.daemons))
    await hub.wait_connected(daemon_id, within=WITHIN)
    return daemon_id, done


async def status(home: Path) -> dict[str, Any]:
    done = await cli(home, "hub", "status", "-o", "json")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def daemon_log(home: Path) -> str:
    return (home / "daemon.log").read_text(errors="replace")


def test_a_frame_nested_too_deep_is_dropped_and_the_link_serves_on(daemon: LiveDaemon) -> None:
    async def scenario() -> None:
        async with FakeHub() as hub:
            daemon_id, _ = await connect(hub, daemon.home)
            depth = 100_000
            hub.send_raw(daemon_id, "[" * depth + "]" * depth)
            deep = {"type": "session", "message": {"type": "x", "nested": None}}
            node: dict[str, Any] = deep["message"]  # type: ignore[assignment]
            for _ in range(900):  # parses, but no Hub message needs this
                node["nested"] = {"nested": None}
                node = node["nested"]
            hub.send_raw(daemon_id, json.dumps(deep))
            # The same socket still answers: nothing above ended the link task.
            answer = await hub.validate(daemon_id, "claude", within=WITHIN)
            assert "valid" in answer, answer
            assert hub.daemons[daemon_id].generation == 1
            assert (await status(daemon.home))["state"] == "connected"
            assert hub.violations == []

    asyncio.run(asyncio.wait_for(scenario(), 4 * WITHIN))
    log = daemon_log(daemon.home)
    assert "ignored a Hub frame nested deeper than" in log
    assert "Traceback" not in log


ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[H\x9b31m\u202e"
"""Retitle the terminal, clear it, home the cursor, a C1 CSI, a right-to-left override."""


def _terminal_safe(text: str) -> None:
    assert not any(ch in text for ch in "\x1b\x07\x9b\u202e"), repr(text)
    assert all(len(line) <= 300 for line in text.splitlines()), "an unbounded line"


def test_hub_strings_reach_the_terminal_printable_and_bounded(daemon: LiveDaemon) -> None:
    async def scenario() -> list[subprocess.CompletedProcess[str]]:
        async with FakeHub() as hub:
            hub.enroll_answer = {
                "slug": f"evil{ESCAPES}" + "s" * 10_000,
                "scopes": ["hub.execution.*", f"x{ESCAPES}" + "y" * 10_000],
            }
            _, connected = await connect(hub, daemon.home)
            shown = [connected]
            for output in ("table", "yaml", "json"):
                shown.append(await cli(daemon.home, "hub", "status", "-o", output))
            return shown

    shown = asyncio.run(asyncio.wait_for(scenario(), 4 * WITHIN))
    for done in shown:
        assert done.returncode == 0, done.stderr
        _terminal_safe(done.stdout)
        _terminal_safe(done.stderr)
    table = shown[1].stdout
    assert "evil" in table
    assert "hub.execution.*" in table


DENIED_ENV = (
    "LD_PRELOAD",
    "PATH",
    "NODE_OPTIONS",
    "PASEO_HOME",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "HTTPS_PROXY",
    "NODE_TLS_REJECT_UNAUTHORIZED",
)


def test_a_hub_env_that_would_steer_the_agents_programs_is_refused(
    daemon: LiveDaemon, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()

    async def scenario() -> None:
        async with FakeHub() as hub:
            daemon_id, _ = await connect(hub, daemon.home)
            for name in DENIED_ENV:
                env = {"PASEO_HUB_CONFIG_JSON": "{}", name: "/tmp/evil"}
                answer = await hub.create(
                    daemon_id, prompt="p", cwd=str(work), provider=HANG, env=env, within=WITHIN
                )
                assert answer["success"] is False, (name, answer)
                assert answer["agentId"] is None
                assert answer["error"]["code"] == "create_failed"
                message = answer["error"]["message"]
                assert name in message, message
                assert "env" in message, message
                assert "PASEO_HUB_CONFIG_JSON" not in message
            # What the Hub is meant to send is accepted.
            allowed = {
                "PASEO_AGENT_PROVIDER": HANG,
                "PASEO_AGENT_MODE": "default",
                "PASEO_HUB_CONFIG_JSON": "{}",
                "GITHUB_TOKEN": "materialised-secret",
            }
            answer = await hub.create(
                daemon_id, prompt="p", cwd=str(work), provider=HANG, env=allowed, within=WITHIN
            )
            assert answer["success"] is True, answer

    asyncio.run(asyncio.wait_for(scenario(), 4 * WITHIN))
    listed = json.loads(paseo(daemon.home, "ls", "-a", "-o", "json").stdout)
    assert len(listed) == 1, "a refused create made an agent"


def test_a_replayed_create_whose_agent_cannot_start_logs_one_line(
    daemon: LiveDaemon, tmp_path: Path
) -> None:
    """After a restart the Hub's replayed create resumes the agent's session; when that start
    times out the Hub gets ``create_failed`` and the log one line, not a traceback at ERROR
    (a crash loop replays every live execution on each start)."""
    work = tmp_path / "work"
    work.mkdir()
    env = {"PASEO_AGENT_START_TIMEOUT": START_TIMEOUT}

    async def scenario() -> dict[str, Any]:
        async with FakeHub() as hub:
            daemon_id, _ = await connect(hub, daemon.home)
            answer = await hub.create(
                daemon_id, prompt="p", cwd=str(work), provider=HANG, within=WITHIN
            )
            assert answer["success"] is True, answer
            execution = hub.executions[answer["executionId"]]
            await asyncio.to_thread(stop_daemon, daemon.home)
            await asyncio.to_thread(start_daemon, daemon.home, env)
            await hub.wait_for(lambda: len(execution.responses) >= 2, 3 * WITHIN)
            return execution.responses[-1]

    replayed = asyncio.run(asyncio.wait_for(scenario(), 6 * WITHIN))
    execution_id = replayed["executionId"]
    assert replayed["success"] is False, replayed
    assert replayed["error"]["code"] == "create_failed"
    assert "did not start within" in replayed["error"]["message"]
    log = daemon_log(daemon.home)
    assert "Traceback" not in log, log[-4000:]
    lines = [line for line in log.splitlines() if f"execution {execution_id} failed" in line]
    assert len(lines) == 1, lines
    assert "did not start within" in lines[0]


def test_temporary_files_a_killed_write_left_are_swept_at_start(paseo_home: Path) -> None:
    """A daemon killed mid-write leaves ``.<file>.<random>.tmp`` beside the Hub plugin's files
    (the relationship's holds the Hub secret); the next start removes them, and only them."""
    paseo_home.mkdir(parents=True, exist_ok=True)
    left = [
        paseo_home / ".hub-resume-intents.json.0a1b2c3d4e5f.tmp",
        paseo_home / ".hub-relationship.json.5f4e3d2c1b0a.tmp",
    ]
    for path in left:
        path.write_text('{"credential": {"secret": "leaked"}}')
    others = paseo_home / ".someone-elses.json.0a1b2c3d4e5f.tmp"
    others.write_text("{}")
    live = start_daemon(paseo_home)
    try:
        # The plugin starts in the background of the daemon's start: wait, bounded.
        wait_for(lambda: not any(path.exists() for path in left), what="the sweep")
        assert others.exists(), "the sweep removed a file that is not the Hub plugin's"
    finally:
        stop_daemon(live.home)
        kill_leftover(live.pid)
