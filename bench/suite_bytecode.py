"""What the test suite's shared bytecode cache saves each Python subprocess it starts.

With ``PYTHONDONTWRITEBYTECODE=1`` (set on the development machine and in CI) every daemon and
CLI process the suite starts compiled the kernel and plugin modules again; tests/conftest.py
now gives the suite and its subprocesses one private cache (``PYTHONPYCACHEPREFIX``). This
bench imports what a daemon start imports (the CLI app, the daemon wiring, two plugins) in a
fresh interpreter, alternately without any bytecode cache written (the baseline, as before)
and with a warm private cache, and prints the median CPU seconds of each and their ratio. The
baseline is only that if the checkout has no ``__pycache__`` beside its sources.
Run: ``.venv/bin/python bench/suite_bytecode.py`` (``--runs N``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

IMPORTS = "import paseo.cli.app, paseo.daemon.wiring, paseo_websocket.http_routes, paseo_mcp.plugin"


def cpu_seconds(env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", IMPORTS], env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    }
    with tempfile.TemporaryDirectory(prefix="paseo-pycache-") as cache:
        # As before: third-party bytecode pip wrote is read, the checkout's is never written.
        uncached = dict(base, PYTHONDONTWRITEBYTECODE="1")
        cached = dict(base, PYTHONPYCACHEPREFIX=cache)
        cpu_seconds(cached)  # warm the cache once
        without, with_ = [], []
        for _ in range(args.runs):
            without.append(cpu_seconds(uncached))
            with_.append(cpu_seconds(cached))
    a, b = statistics.median(without), statistics.median(with_)
    print(f"no bytecode cache (baseline): {a:.3f} CPU s per process (median of {args.runs})")
    print(f"shared bytecode cache:        {b:.3f} CPU s per process")
    print(f"ratio cached / baseline:      {b / a:.2f}")


if __name__ == "__main__":
    main()
