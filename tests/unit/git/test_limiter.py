"""The Git process limiter under bursts: both limits hold, measured on real start times."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from helpers.waiting import wait_for

from paseo.git.limiter import GitLimits, GitProcessLimiter
from paseo.git.runner import GitCommandFailed, GitRunner


def _max_in_any_window(starts: list[float], window: float = 1.0) -> int:
    """The most starts inside any half-open interval of ``window`` seconds."""
    best = 0
    left = 0
    for right, start in enumerate(starts):
        while start - starts[left] >= window:
            left += 1
        best = max(best, right - left + 1)
    return best


def test_500_git_processes_hold_both_limits(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    limits = GitLimits(max_processes_per_second=200, max_process_concurrency=8)
    limiter = GitProcessLimiter(limits)
    starts: list[float] = []
    actives: list[int] = []

    def observe(at: float, active: int) -> None:
        starts.append(at)
        actives.append(active)

    limiter.observer = observe
    runner = GitRunner(limiter)

    async def scenario() -> None:
        await asyncio.gather(
            *(runner.run(["rev-parse", "--git-dir"], cwd=tmp_path) for _ in range(500))
        )

    asyncio.run(scenario())
    assert runner.processes_started == 500 == limiter.started
    assert max(actives) <= 8
    assert limiter.max_active <= 8
    assert _max_in_any_window(starts) <= 200
    assert limiter.active == 0


def test_rate_allowance_is_a_burst_that_does_not_wait_for_exits() -> None:
    limiter = GitProcessLimiter(
        GitLimits(max_processes_per_second=20, max_process_concurrency=1000)
    )
    starts: list[float] = []

    async def scenario() -> None:
        release = asyncio.Event()

        async def hold() -> None:
            async with limiter.slot():
                await release.wait()

        all_started = asyncio.Event()

        def observe(at: float, active: int) -> None:
            starts.append(at)
            if len(starts) == 45:
                all_started.set()

        limiter.observer = observe
        tasks = [asyncio.create_task(hold()) for _ in range(45)]
        async with asyncio.timeout(30):
            await all_started.wait()
        # Nothing exited, yet every start happened: only the rate limit spaced them.
        assert limiter.active == 45
        release.set()
        await asyncio.gather(*tasks)

    asyncio.run(scenario())
    assert _max_in_any_window(starts) <= 20
    assert starts[19] - starts[0] < 1.0  # the first twenty went as one burst
    assert starts[20] - starts[0] >= 1.0
    assert starts[40] - starts[20] >= 1.0


def test_limits_are_reread_on_every_acquisition() -> None:
    current = [GitLimits(64, 1)]
    limiter = GitProcessLimiter(lambda: current[0])

    async def scenario() -> None:
        await limiter.acquire()
        current[0] = GitLimits(64, 2)
        async with asyncio.timeout(5):
            await limiter.acquire()
        assert limiter.active == 2

    asyncio.run(scenario())


def test_a_timed_out_command_is_killed_with_its_group(tmp_path: Path) -> None:
    script = tmp_path / "slow-git"
    script.write_text('#!/bin/sh\nsleep 30 &\necho $! > "$1"\nwait\n')
    script.chmod(0o755)
    marker = tmp_path / "child.pid"
    runner = GitRunner(GitProcessLimiter(), git=str(script))

    async def scenario() -> None:
        await runner.run([str(marker)], cwd=tmp_path, timeout=0.5)

    with pytest.raises(GitCommandFailed, match="timed out"):
        asyncio.run(scenario())
    child = int(marker.read_text())
    wait_for(lambda: _gone(child), timeout=10, what="the command's child to die")
    assert runner.limiter.active == 0


def _gone(pid: int) -> bool:
    """Dead, or a zombie waiting for its (unrelated) parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
