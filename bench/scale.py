"""The daemon at scale: 1,000, 10,000 and 50,000 agents on both store drivers, each figure next
to its floor measured in the same run.

Per driver and agent count, on a home of closed agents (about 1 KB each, over 50 cwds):

* ready: ``paseo daemon start`` wall time to accepting connections; floor for json: reading and
  ``json.loads`` of every agent file; for both: the same start on an empty home. ``load x
  floor`` is what the agents add to the start (ready minus the empty start) over the json
  floor, or ready over the empty start for sqlite (whose start must not grow with agents).
  The same figures follow in CPU seconds (the daemon's, all threads, once ready; the floor's):
  on a shared machine they move far less than wall time.
* RSS once ready; floor: an idle Python interpreter.
* stop: ``paseo daemon stop`` wall time; floor: the same stop with no agent.

Every round measures the floors right before the figures they compare with, and figures are
medians over the rounds, so load from elsewhere on the machine hits both alike.
* ``paseo ls`` (one page) wall time, and ``paseo ls -a -o json``: the daemon's RSS growth while it
  answers and the CLI's peak RSS.
* a trivial RPC round trip (``server.ping``) p50 vs a bare websockets echo server, the same
  uvloop client for both (a fast client makes the servers' cost show, as in
  ``bench/rpc_hot.py``, the dedicated bench), several echo-then-daemon pairs in every run (the
  ratio is the median of the pairs' ratios), each with fewer pings than the default burst
  allowance so the method answers every one.

Targets (issue "Scale"), each checked at the largest count of the run: RSS at 50,000 <= 250 MiB
json / 90 MiB sqlite; ready at 50,000 <= 1.5 s json / 0.5 s sqlite; stop at 50,000 <= 1.5x the
empty stop; ``ls -a -o json`` at 50,000 grows the daemon < 20 MiB with the CLI < 60 MiB (the CLI
measured under a small parent, see :data:`CHILD_PEAK`); ``paseo ls`` <= 0.25 s; round trip p50
<= 1.0x echo.

Run: ``.venv/bin/python bench/scale.py`` (``--counts 1000,10000`` for a quicker pass,
``--drivers json``, ``--runs 3``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon import (
    ECHO_SERVER,
    PASEO,
    PYTHON,
    percentile,
    round_trips,
    start_daemon,
    stop_daemon,
)
from store import build_records, write_json_home

MIB = 1024 * 1024
TARGETS: dict[tuple[str, str], float] = {
    ("json", "rss MiB"): 250.0,
    ("sqlite", "rss MiB"): 90.0,
    ("json", "ready s"): 1.5,
    ("sqlite", "ready s"): 0.5,
}


def closed_home(home: Path, agents: int) -> None:
    """A JSON-layout home of ``agents`` closed agents (what a stopped daemon leaves)."""
    project, workspaces, records = build_records(agents, max(1, min(1000, agents // 10)))
    for record in records:
        record["lastStatus"] = "closed"
    write_json_home(home, project, workspaces, records)


def to_sqlite(home: Path) -> float:
    """Move the home onto the sqlite driver with the product's own migration; seconds taken."""
    start = time.perf_counter()
    result = subprocess.run(
        [
            PASEO,
            "--home",
            str(home),
            "store",
            "migrate",
            "--from",
            "json",
            "--to",
            "sqlite",
            "--switch",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"migration failed:\n{result.stderr}")
    return time.perf_counter() - start


def parse_floor(home: Path) -> tuple[float, float]:
    """Read and parse every agent file, as the cheapest possible cold load would: (wall, CPU)
    seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    for path in (home / "agents").rglob("*.json"):
        json.loads(path.read_bytes())
    return time.perf_counter() - start, time.process_time() - cpu


def cpu_seconds(pid: int) -> float:
    """CPU time ``pid`` used so far (all its threads): what start-up cost, whatever else the
    machine runs meanwhile."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def idle_python_rss() -> int:
    process = subprocess.Popen([PYTHON, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.5)
        return int(psutil.Process(process.pid).memory_info().rss)
    finally:
        process.kill()
        process.wait()


def env_for(home: Path) -> dict[str, str]:
    return {**os.environ, "PASEO_HOME": str(home), "PASEO_LISTEN": "127.0.0.1:0"}


def timed_start(home: Path) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    report = start_daemon(home, env_for(home))
    return time.perf_counter() - start, report


def timed_stop(home: Path) -> float:
    start = time.perf_counter()
    stop_daemon(env_for(home))
    return time.perf_counter() - start


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        timeout=600,
        check=False,
    )
    return time.perf_counter() - start


CHILD_PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def list_all_cost(pid: int, env: dict[str, str]) -> tuple[int, int]:
    """(daemon RSS growth, CLI peak RSS) in bytes while ``paseo ls -a -o json`` runs."""
    daemon = psutil.Process(pid)
    before = daemon.memory_info().rss
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                peak[0] = max(peak[0], daemon.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # The CLI runs under a small interpreter that reports its children's peak: a child forked
    # straight from this process would count this process's pages (the bench's records) in its
    # ru_maxrss until it execs.
    measured = subprocess.run(
        [PYTHON, "-c", CHILD_PEAK, PASEO, "ls", "-a", "-o", "json"], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=600, check=True,
    )
    done.set()
    sampler.join()
    return peak[0] - before, int(measured.stdout.split()[-1]) * 1024


class EchoServer:
    """The bare websockets echo server (its own process), kept for the whole bench so each
    run can measure it right next to the daemon."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [PYTHON, "-c", ECHO_SERVER], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.url = f"ws://127.0.0.1:{int(self.process.stdout.readline())}"

    def round_trip(self, count: int) -> float:
        return percentile(asyncio.run(round_trips(self.url, None, count, rpc=False)), 0.5)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def daemon_round_trip(report: dict[str, Any], home: Path, count: int) -> float:
    token = (home / "local-credential").read_text().strip()
    url = report["listen"][0]
    samples = asyncio.run(round_trips(url, token, count, rpc=True))
    return percentile(samples, 0.5)


PINGS = 900
"""Round trips per run: under the default burst allowance (1,000 calls), so every ping is
answered by the method, as the echo answers every frame."""

PAIRS = 5
"""Echo-then-daemon measurements per run: one pair swings by a third on a shared machine."""


def measure(
    driver: str, agents: int, runs: int, scratch: Path, *, empty: Path, echo: EchoServer
) -> dict[str, float]:
    """Medians of ``runs`` rounds; each round measures the floors right before the figures
    (the parse floor, then the empty home's start and stop, then the loaded home's), so load
    from elsewhere on the machine hits both alike."""
    home = scratch / f"{driver}-{agents}"
    closed_home(home, agents)
    figures: dict[str, float] = {}
    if driver == "sqlite":
        figures["migrate s"] = to_sqlite(home)
    env = env_for(home)
    floors, floor_cpus, empty_readies, empty_cpus, empty_stops = [], [], [], [], []
    ready_cpus: list[float] = []
    readies, stops, rss, lists = [], [], [], []
    growth = cli_peak = 0
    rpcs: list[float] = []
    echoes: list[float] = []
    for run in range(runs):
        if driver == "json":
            floor, floor_cpu = parse_floor(home)
            floors.append(floor)
            floor_cpus.append(floor_cpu)
        empty_ready, empty_report = timed_start(empty)
        empty_readies.append(empty_ready)
        empty_cpus.append(cpu_seconds(empty_report["pid"]))
        empty_stops.append(timed_stop(empty))
        ready, report = timed_start(home)
        readies.append(ready)
        ready_cpus.append(cpu_seconds(report["pid"]))
        rss.append(psutil.Process(report["pid"]).memory_info().rss)
        lists.append(statistics.median(wall([PASEO, "ls"], env) for _ in range(3)))
        # The round trip beside the echo in every run (before the large listing, whose
        # garbage the daemon is still freeing afterwards): the ratio is taken per run.
        for _pair in range(PAIRS):
            echoes.append(echo.round_trip(PINGS))
            rpcs.append(daemon_round_trip(report, home, PINGS))
        if run == 0:
            growth, cli_peak = list_all_cost(report["pid"], env)
        stops.append(timed_stop(home))
    figures.update(
        {
            "empty ready s": statistics.median(empty_readies),
            "empty ready cpu s": statistics.median(empty_cpus),
            "ready cpu s": statistics.median(ready_cpus),
            "empty stop s": statistics.median(empty_stops),
            "ready s": statistics.median(readies),
            "rss MiB": statistics.median(rss) / MIB,
            "stop s": statistics.median(stops),
            "ls s": statistics.median(lists),
            "ls -a json daemon growth MiB": growth / MIB,
            "ls -a json cli peak MiB": cli_peak / MIB,
            "rpc p50 us": statistics.median(rpcs) * 1e6,
            "echo p50 us": statistics.median(echoes) * 1e6,
            "rpc x echo": statistics.median(r / e for r, e in zip(rpcs, echoes, strict=True)),
        }
    )
    if floors:
        figures["parse floor s"] = statistics.median(floors)
        figures["parse floor cpu s"] = statistics.median(floor_cpus)
    return figures


def empty_home(driver: str, scratch: Path) -> Path:
    home = scratch / f"{driver}-empty"
    home.mkdir()
    if driver == "sqlite":
        (home / "config.json").write_text('{"storage": {"driver": "sqlite"}}\n')
    return home


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="1000,10000,50000")
    parser.add_argument("--drivers", default="json,sqlite")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    drivers = args.drivers.split(",")
    python_rss = idle_python_rss() / MIB
    import uvloop

    uvloop.install()  # the round trips' client (see the module docstring)
    echo = EchoServer()
    print(f"floors: idle python RSS {python_rss:.1f} MiB; websockets echo measured in each run")
    with tempfile.TemporaryDirectory(prefix="paseo-scale-") as tmp:
        scratch = Path(tmp)
        try:
            run_drivers(
                drivers=drivers,
                counts=counts,
                runs=args.runs,
                scratch=scratch,
                echo=echo,
                python_rss=python_rss,
            )
        finally:
            echo.close()
    return 0


def run_drivers(
    *,
    drivers: list[str],
    counts: list[int],
    runs: int,
    scratch: Path,
    echo: EchoServer,
    python_rss: float,
) -> None:
    for driver in drivers:
        empty = empty_home(driver, scratch)
        print(
            f"\n{driver} (floors: ready = json read+parse of every agent file, or the empty "
            "home's start for sqlite; rss = idle python; stop = the empty home's stop)"
        )
        header = (
            "agents",
            "ready s",
            "floor",
            "empty ready",
            "load x floor",
            "rss MiB",
            "x idle py",
            "stop s",
            "x empty",
            "ls s",
            "ls-a grow MiB",
            "ls-a cli MiB",
            "rpc p50 us",
            "x echo",
        )
        print("  ".join(f"{h:>13}" for h in header))
        for agents in counts:
            f = measure(driver, agents, runs, scratch, empty=empty, echo=echo)
            floor = f.get("parse floor s", f["empty ready s"])
            row = (
                agents,
                f["ready s"],
                floor,
                f["empty ready s"],
                (f["ready s"] - f["empty ready s"]) / floor
                if "parse floor s" in f
                else f["ready s"] / floor,
                f["rss MiB"],
                f["rss MiB"] / python_rss,
                f["stop s"],
                f["stop s"] / f["empty stop s"],
                f["ls s"],
                f["ls -a json daemon growth MiB"],
                f["ls -a json cli peak MiB"],
                f["rpc p50 us"],
                f["rpc x echo"],
            )
            print("  ".join(f"{v:>13.3f}" if isinstance(v, float) else f"{v:>13}" for v in row))
            cpu_floor = f.get("parse floor cpu s", f["empty ready cpu s"])
            cpu_ratio = (
                (f["ready cpu s"] - f["empty ready cpu s"]) / cpu_floor
                if "parse floor cpu s" in f
                else f["ready cpu s"] / cpu_floor
            )
            print(
                f"{'':>13}  (CPU seconds, steadier on a busy machine: ready "
                f"{f['ready cpu s']:.3f}, floor {cpu_floor:.3f}, empty ready "
                f"{f['empty ready cpu s']:.3f}, load x floor {cpu_ratio:.3f})"
            )
            if "migrate s" in f:
                print(f"{'':>13}  (sqlite home built by `paseo store migrate` in "
                      f"{f['migrate s']:.1f} s)")
            if agents == max(counts):
                checks = [
                    (name, f[name], target)
                    for (target_driver, name), target in TARGETS.items()
                    if target_driver == driver and name in f
                ] + [
                    ("stop x empty", f["stop s"] / f["empty stop s"], 1.5),
                    ("ls s", f["ls s"], 0.25),
                    ("ls -a json daemon growth MiB", f["ls -a json daemon growth MiB"], 20.0),
                    ("ls -a json cli peak MiB", f["ls -a json cli peak MiB"], 60.0),
                    ("rpc p50 x echo", f["rpc x echo"], 1.0),
                ]
                for name, value, target in checks:
                    verdict = "ok" if value <= target else "MISSED"
                    print(f"{'':>13}  target {name} <= {target}: {value:.3f} {verdict}")


if __name__ == "__main__":
    sys.exit(main())
