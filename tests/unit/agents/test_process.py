"""Agent program processes run in their own group and are reaped with every child."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from paseo.agents.process import AgentProcessLauncher

launch = AgentProcessLauncher().launch


def _run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_terminate_kills_the_whole_group_including_orphan_prone_children(tmp_path: Path) -> None:
    async def scenario() -> list[int]:
        child = await launch(
            ["sh", "-c", "sleep 300 & sleep 300 & echo ready; wait"],
            cwd=str(tmp_path),
            env={"PASEO_AGENT_ID": "a1"},
            provider="test",
        )
        assert await child.read_line() == b"ready"
        assert os.getpgid(child.pid) == child.pid
        members = [p.pid for p in psutil.Process(child.pid).children(recursive=True)]
        assert len(members) == 2
        await child.terminate(grace=1.0)
        return members

    members = _run(scenario())
    for pid in members:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_lines_in_and_out_and_stderr_is_kept(tmp_path: Path) -> None:
    async def scenario() -> tuple[bytes | None, str, int]:
        child = await launch(
            ["sh", "-c", 'read line; echo "got $line"; echo "$PASEO_AGENT_ID oops" >&2; exit 3'],
            cwd=str(tmp_path),
            env={"PASEO_AGENT_ID": "agent-7"},
            provider="test",
        )
        await child.write_line({"hello": 1})
        line = await child.read_line()
        code = await child.wait()
        await child.terminate()
        return line, child.stderr_tail(), code

    line, stderr, code = _run(scenario())
    assert line == b'got {"hello": 1}'
    assert "agent-7 oops" in stderr
    assert code == 3


def test_missing_program_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _run(
            launch(["/nonexistent/agent"], cwd=str(tmp_path), env={}, provider="test")
        )
