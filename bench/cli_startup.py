"""CLI start-up cost: ``paseo --help``, ``paseo --version`` and ``paseo ls`` against floors.

Prints the median wall time of each over repeated runs and its ratio to ``python -c pass``
measured in the same run (target: at most 2x for ``--help``/``--version``). ``paseo ls`` (one
page, against a running daemon) is also printed next to its own floor, ``python`` opening and
closing one WebSocket to the same daemon with websockets' client (target: ls at most 0.25 s).
Run: ``.venv/bin/python bench/cli_startup.py``.
"""

from __future__ import annotations

import argparse
import json
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


WEBSOCKET_FLOOR = """
import sys
from websockets.sync.client import connect
with connect(sys.argv[1], additional_headers={"Authorization": "Bearer " + sys.argv[2]},
             compression=None, ping_interval=None):
    pass
"""


def start_daemon(paseo: str, env: dict[str, str]) -> str:
    """Start a daemon on ``env``'s home; its WebSocket URL."""
    started = subprocess.run(
        [paseo, "daemon", "start", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    url: str = json.loads(started.stdout)["listen"][0]
    return url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    paseo = shutil.which("paseo", path=str(Path(sys.executable).parent)) or "paseo"
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, PASEO_HOME=str(Path(home) / "never-created"))
        env.pop("PASEO_HOST", None)
        daemon_env = dict(env, PASEO_HOME=str(Path(home) / "daemon"), PASEO_LISTEN="127.0.0.1:0")
        url = start_daemon(paseo, daemon_env)
        try:
            token = (Path(home) / "daemon" / "local-credential").read_text().strip()
            cases = {
                "python -c pass": ([sys.executable, "-c", "pass"], env),
                "paseo --help": ([paseo, "--help"], env),
                "paseo --version": ([paseo, "--version"], env),
                "python + ws connect": (
                    [sys.executable, "-c", WEBSOCKET_FLOOR, url, token],
                    daemon_env,
                ),
                "paseo ls": ([paseo, "ls"], daemon_env),
            }
            # Interleave rounds so machine noise hits every case alike.
            results: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(args.runs):
                for name, (argv, case_env) in cases.items():
                    results[name].append(measure(argv, 1, case_env))
        finally:
            subprocess.run(
                [paseo, "daemon", "stop", "--force"],
                env=daemon_env,
                capture_output=True,
                timeout=60,
                check=False,
            )
        baseline = statistics.median(results["python -c pass"])
        floor = statistics.median(results["python + ws connect"])
        print(f"{'command':<22}{'median ms':>10}{'vs pass':>9}{'vs ws':>8}")
        for name, samples in results.items():
            median = statistics.median(samples)
            versus_ws = f"{median / floor:>8.2f}" if name == "paseo ls" else ""
            print(f"{name:<22}{median * 1000:>10.1f}{median / baseline:>9.2f}{versus_ws}")
        print("targets: --help and --version at most 2x python -c pass; paseo ls at most 250 ms")
        assert not (Path(home) / "never-created").exists()
    return 0


if __name__ == "__main__":
    sys.exit(main())
