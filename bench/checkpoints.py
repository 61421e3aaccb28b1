"""What a turn-boundary checkpoint costs, against ``git status`` in the same repository and run.

A temporary repository of ``--files`` committed files (default 10,000, in 100 directories) with
an ignored build directory; then, ``--rounds`` times, ``--changed`` files are rewritten and one
untracked file is added, and the bench times

* ``git status --porcelain`` (what any git tool pays to look at the tree), and
* one checkpoint as the daemon takes it (:class:`paseo.checkpoints.plumbing.Repo`: the cached
  index copied to a temporary path, ``git add -A`` into it, ``write-tree``, ``commit-tree``,
  ``update-ref``), through the same :class:`~paseo.git.runner.GitRunner` and limiter;

and prints the medians and their ratio (checkpoint / status), plus the first checkpoint of the
repository (no cached index yet: every file is hashed once) on its own line.

Run: ``.venv/bin/python bench/checkpoints.py`` (or ``--files 1000 --rounds 3`` for a quick look).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from paseo.checkpoints.plumbing import REF_ROOT, Repo  # noqa: E402
from paseo.git.limiter import GitProcessLimiter  # noqa: E402
from paseo.git.runner import GitRunner  # noqa: E402


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=600)


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("build/\n")
    for n in range(files):
        directory = repo / f"d{n % 100:02d}"
        directory.mkdir(exist_ok=True)
        (directory / f"f{n}.txt").write_text(f"file {n}\n" * 8)
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\0" * 4096)
    git(repo, "add", "-A")
    git(
        repo, "-c", "user.name=bench", "-c", "user.email=bench@localhost",
        "commit", "-q", "-m", "files",
    )  # fmt: skip
    return repo


def timed_status(repo: Path) -> float:
    start = time.perf_counter()
    git(repo, "status", "--porcelain")
    return time.perf_counter() - start


async def checkpoint(repo: Repo, cache: Path, parent: str | None, n: int) -> tuple[float, str]:
    start = time.perf_counter()
    tree = await repo.snapshot(cache, None)
    commit = await repo.commit(tree, parent, f"bench {n}\n\n{{}}\n")
    await repo.set_ref(f"{REF_ROOT}/bench/{n}", commit)
    return time.perf_counter() - start, commit


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="paseo-bench-ckpt-") as scratch:
        root = Path(scratch)
        made = time.perf_counter()
        path = make_repo(root, args.files)
        print(f"repository: {args.files} files, made in {time.perf_counter() - made:.1f}s")
        runner = GitRunner(GitProcessLimiter())
        repo = Repo(runner, path)
        cache = root / "state" / "index"
        first, parent = await checkpoint(repo, cache, None, 0)
        print(f"first checkpoint (no cached index, every file hashed): {first * 1000:.1f} ms")
        status_times, checkpoint_times = [], []
        for n in range(1, args.rounds + 1):
            for k in range(args.changed):
                target = path / f"d{k % 100:02d}" / f"f{k}.txt"
                target.write_text(f"round {n}\n")
            (path / f"untracked-{n}.txt").write_text("new\n")
            # Alternate which goes first so neither always sees the other's warm caches.
            if n % 2:
                status_times.append(timed_status(path))
                spent, parent = await checkpoint(repo, cache, parent, n)
            else:
                spent, parent = await checkpoint(repo, cache, parent, n)
                status_times.append(timed_status(path))
            checkpoint_times.append(spent)
        status = statistics.median(status_times)
        taken = statistics.median(checkpoint_times)
        print(f"git status --porcelain: median {status * 1000:.1f} ms over {args.rounds}")
        print(
            f"checkpoint ({args.changed} changed + 1 untracked): median {taken * 1000:.1f} ms "
            f"over {args.rounds}, {runner.processes_started} git processes in all"
        )
        print(f"ratio checkpoint / status: {taken / status:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=9)
    asyncio.run(main(parser.parse_args()))
