"""The empty daemon's start against another tree's, interleaved (issue 26, last condition).

Each round starts this tree's daemon, then the other tree's (``--old-tree PATH``, a checkout with
its own ``.venv``), each with ``paseo daemon start -o json`` on a fresh ``PASEO_HOME`` (loopback,
port 0); once the start answers ready it reads the daemon's CPU time (all threads, user +
system) and RSS with psutil, then ``paseo daemon stop --force``. It prints each tree's medians
and this tree's over the other's: CPU seconds and RSS are the figures to compare on a shared
machine (wall time is printed but swings with the load).

Both trees' bytecode is compiled first: with ``PYTHONDONTWRITEBYTECODE`` set (as on this
machine) and no ``__pycache__``, every start would compile some 400 modules.

Run: ``.venv/bin/python bench/empty_start.py --old-tree /tmp/oldtree`` (``--runs 5``).
Without ``--old-tree`` it measures this tree alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

MIB = 1024 * 1024
HERE = Path(__file__).resolve().parent.parent
SOURCES = ["paseo", "plugins", "hookspecs/paseo_hookspecs"]


def compile_bytecode(tree: Path) -> None:
    python = tree / ".venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "compileall", "-q", *SOURCES], cwd=tree, check=True, timeout=600
    )


def one_start(tree: Path) -> dict[str, float]:
    """One start of ``tree``'s daemon on a fresh, empty home: wall s, CPU s, RSS MiB at ready."""
    paseo = str(tree / ".venv" / "bin" / "paseo")
    with tempfile.TemporaryDirectory(prefix="paseo-empty-start-") as tmp:
        user_home = Path(tmp) / "home"
        user_home.mkdir()
        env = {
            **os.environ,
            "PASEO_HOME": str(Path(tmp) / "paseo"),
            "HOME": str(user_home),
            "PASEO_LISTEN": "127.0.0.1:0",
        }
        env.pop("PYTHONPATH", None)
        begin = time.perf_counter()
        result = subprocess.run(
            [paseo, "daemon", "start", "-o", "json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        wall = time.perf_counter() - begin
        try:
            if result.returncode != 0:
                raise SystemExit(f"{tree}: the daemon did not start:\n{result.stderr}")
            report: dict[str, Any] = json.loads(result.stdout)
            daemon = psutil.Process(int(report["pid"]))
            times = daemon.cpu_times()
            rss = daemon.memory_info().rss
        finally:
            subprocess.run(
                [paseo, "daemon", "stop", "--force"],
                env=env,
                capture_output=True,
                timeout=60,
                check=False,
            )
    return {"wall s": wall, "cpu s": times.user + times.system, "rss MiB": rss / MIB}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old-tree", type=Path, help="a checkout with its own .venv to compare")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true", help="bytecode is compiled already")
    args = parser.parse_args()
    trees = {"this tree": HERE}
    if args.old_tree is not None:
        trees["old tree"] = args.old_tree.resolve()
    if not args.no_compile:
        for tree in trees.values():
            compile_bytecode(tree)
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for round_no in range(args.runs):
        for name, tree in trees.items():
            sample = one_start(tree)
            samples[name].append(sample)
            figures = "  ".join(f"{key} {value:.3f}" for key, value in sample.items())
            print(f"round {round_no + 1} {name:9}  {figures}", flush=True)
    keys = ["wall s", "cpu s", "rss MiB"]
    medians = {
        name: {key: statistics.median(s[key] for s in runs) for key in keys}
        for name, runs in samples.items()
    }
    print(f"\nmedians of {args.runs} interleaved starts, empty home")
    print(f"{'':12}" + "".join(f"{key:>12}" for key in keys))
    for name, figures in medians.items():
        print(f"{name:12}" + "".join(f"{figures[key]:12.3f}" for key in keys))
    if "old tree" in medians:
        new, old = medians["this tree"], medians["old tree"]
        print(f"{'this / old':12}" + "".join(f"{new[k] / old[k]:12.2f}" for k in keys))
        print(f"{'this - old':12}" + "".join(f"{new[k] - old[k]:12.3f}" for k in keys))


if __name__ == "__main__":
    sys.exit(main())
