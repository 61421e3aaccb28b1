"""CLI start-up cost: ``paseo --help`` and ``paseo --version`` against a bare interpreter.

Prints the median wall time of each over repeated runs and its ratio to ``python -c pass``
measured in the same run (target: at most 2x). Run: ``.venv/bin/python bench/cli_startup.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(argv: list[str], runs: int, env: dict[str, str]) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True
        )
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    paseo = shutil.which("paseo", path=str(Path(sys.executable).parent)) or "paseo"
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, PASEO_HOME=str(Path(home) / "never-created"))
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "paseo --help": [paseo, "--help"],
            "paseo --version": [paseo, "--version"],
        }
        # Interleave rounds so machine noise hits every case alike.
        results: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, argv in cases.items():
                results[name].append(measure(argv, 1, env))
        baseline = statistics.median(results["python -c pass"])
        print(f"{'command':<18}{'median ms':>10}{'ratio':>8}")
        for name, samples in results.items():
            median = statistics.median(samples)
            print(f"{name:<18}{median * 1000:>10.1f}{median / baseline:>8.2f}")
        assert not (Path(home) / "never-created").exists()
    return 0


if __name__ == "__main__":
    sys.exit(main())
