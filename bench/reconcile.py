"""Reconciliation cost when nothing changed, over 200 projects (each with a workspace).

Prints the median wall time of an unchanged pass next to a forced pass (every location re-read
with dulwich) measured in the same run, their ratio, and how many processes each kind of pass
started (target: none). Run: ``.venv/bin/python bench/reconcile.py [--projects 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from paseo_store_json import JsonStore

from paseo.git.limiter import GitProcessLimiter
from paseo.git.runner import GitRunner
from paseo.workspaces.service import Placement

_started = 0
_original_popen_init = subprocess.Popen.__init__


def _counting_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """Count every child process (asyncio's subprocesses go through Popen too)."""
    global _started
    _started += 1
    _original_popen_init(self, *args, **kwargs)


def make_repos(root: Path, count: int) -> list[Path]:
    repos = []
    for index in range(count):
        repo = root / f"repo-{index:03d}"
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        subprocess.run(
            ["git", "-C", str(repo), "remote", "add", "origin", f"git@example.com:o/r{index}.git"],
            check=True,
        )
        repos.append(repo)
    return repos


async def run(count: int, passes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repos = make_repos(root / "src", count)
        home = root / "home"
        store = JsonStore(home)
        await store.open()
        runner = GitRunner(GitProcessLimiter())
        placement = Placement.build(
            store, home=home, git=runner, worktrees_root=lambda: str(home / "worktrees")
        )
        for repo in repos:
            await placement.workspaces.open_directory(str(repo))
        reconciler = placement.reconciler
        await reconciler.reconcile_once(force=True)

        subprocess.Popen.__init__ = _counting_init  # type: ignore[method-assign]
        try:
            forced, unchanged = [], []
            forced_processes = unchanged_processes = 0
            for _ in range(passes):
                before = _started
                start = time.perf_counter()
                await reconciler.reconcile_once(force=True)
                forced.append(time.perf_counter() - start)
                forced_processes += _started - before
                before = _started
                start = time.perf_counter()
                stats = await reconciler.reconcile_once()
                unchanged.append(time.perf_counter() - start)
                unchanged_processes += _started - before
                assert stats.read == 0, stats
        finally:
            subprocess.Popen.__init__ = _original_popen_init  # type: ignore[method-assign]
        await store.close()

    observed = count * 2
    fast = statistics.median(unchanged)
    slow = statistics.median(forced)
    print(f"locations observed per pass: {observed} ({count} projects + {count} workspaces)")
    print(f"unchanged pass: {fast * 1000:.2f} ms median ({fast / observed * 1e6:.1f} us/location)")
    print(f"forced re-read pass: {slow * 1000:.2f} ms median")
    print(f"ratio unchanged/forced: {fast / slow:.3f}")
    print(f"processes started: unchanged passes {unchanged_processes}, forced {forced_processes}")
    print(f"git processes through the runner: {runner.processes_started} (target 0)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--passes", type=int, default=15)
    args = parser.parse_args()
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    asyncio.run(run(args.projects, args.passes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
