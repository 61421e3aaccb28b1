"""Many agents streaming at once (issue 36, item 1), against the TypeScript daemon and against
the same turns driven directly.

N real Claude Code agents (N = 1, 10, 30, 100 by default) each run one turn whose reply the
fake model server streams in ``--chunks`` pieces ``--delay`` seconds apart, while three clients
follow every agent's stream. Sides (:mod:`concurrency_sides`): this daemon, the TypeScript
daemon (built from the mirrored repository, ``--ts-source``), and the programs driven over
their own pipes by this process. The fake model server stamps every chunk it emits
(:mod:`concurrency_procs`); a follower stamps every text it receives; a chunk's latency is the
time from its emission to the first receipt that completes it. For each N and side: wall time
(prompts sent to the last follower seeing the last turn end), the daemon's CPU seconds per
1,000 streamed chunks (its own process only, not the agent programs), its peak RSS and the
growth per streaming agent (peak at N minus peak at N = 1, over N - 1), and p50/p99 latency.
Runs are interleaved (the sides' order rotates each run) while every side's agents fit in
memory at once; from ``--apart`` agents on, each side runs alone. Medians are printed.

Targets: daemon CPU per chunk at most 0.5x the TypeScript daemon's; p99 latency at N = 30 at
most 10 ms over direct; memory growth per streaming agent at most 1 MiB; no follower starved
(every follower got every chunk, and the slowest follower's p99 is within 2x + 10 ms of the
fastest's).

Needs the pinned programs (``cd tests/agents && npm ci``), the ``test`` extra, and for the
TypeScript side an exported tree with its ``node_modules`` (docs/performance.md says how).
Run: ``.venv/bin/python bench/concurrency.py --ts-source /tmp/concurrency-ts``
(``--counts 1,10,30``, ``--runs``, ``--chunks``, ``--delay``, ``--sides ours,ts,direct``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from agents_real import Daemon  # noqa: E402
from concurrency_procs import TAG  # noqa: E402
from concurrency_sides import (  # noqa: E402
    DirectSide,
    OursSide,
    Receipts,
    TsSide,
    TurnResult,
)
from helpers.agents_env import BIN_DIR, claude_code_env  # noqa: E402

from paseo.testing.fake_model import RefusingProxy  # noqa: E402

CPU_TARGET = 0.5
LATENCY_TARGET_MS = 10.0
LATENCY_AT = 30
MEMORY_TARGET = 1024 * 1024
WARM = "[[reply:warm]]"
MIB = 1024 * 1024


@contextlib.contextmanager
def stamping_fake(stamps: Path) -> Iterator[str]:
    """The stamping fake model server in its own process; yields its base URL."""
    server = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "concurrency_procs.py"), "fake", str(stamps)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the fake model server did not start (said {url!r})")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def reply_text(tag: str, chunks: int) -> str:
    """A reply of about 24 characters a chunk that starts with ``tag``."""
    words = " ".join(f"w{index:04d}" for index in range(chunks * 4))
    return f"{tag}: {words}"


def read_stamps(stamps: Path, tags: list[str]) -> dict[str, tuple[list[int], list[float]]]:
    """The stamps of ``tags``' streams. The fake writes a stream's line after its last chunk,
    which can be after the program reported its turn's end: wait for them (a few seconds)."""
    found: dict[str, tuple[list[int], list[float]]] = {}
    deadline = time.monotonic() + 10
    while True:
        if stamps.exists():
            for line in stamps.read_text().splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # being written
                found[record["tag"]] = (record["ends"], record["times"])
        if all(tag in found for tag in tags) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def latencies(
    emitted: tuple[list[int], list[float]], received: list[tuple[int, float]]
) -> tuple[list[float], int]:
    """Each emitted chunk's latency (seconds) to the first receipt covering it, and how many
    chunks never arrived."""
    ends, times = emitted
    out: list[float] = []
    index = 0
    for end, at in zip(ends, times, strict=True):
        while index < len(received) and received[index][0] < end:
            index += 1
        if index == len(received):
            return out, len(ends) - len(out)
        out.append(received[index][1] - at)
    return out, 0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass
class RunFigures:
    wall: float
    p50: float
    p99: float
    follower_p99: list[float]
    missing: int
    chunks: int
    cpu_per_1k: float | None
    peak_rss: int | None


def figures(
    result: TurnResult, ids: list[str], tags: list[str], stamps: dict[str, Any]
) -> RunFigures:
    pooled: list[float] = []
    per_follower: list[float] = []
    missing = 0
    chunks = sum(len(stamps[tag][0]) for tag in tags if tag in stamps)
    missing += sum(1 for tag in tags if tag not in stamps)
    for receipts in result.followers:
        mine: list[float] = []
        for agent, tag in zip(ids, tags, strict=True):
            if tag not in stamps:
                continue
            got: Receipts = receipts
            values, lost = latencies(stamps[tag], [tuple(r) for r in got.get(agent, [])])  # type: ignore[misc]
            mine.extend(values)
            missing += lost
        per_follower.append(percentile(mine, 0.99))
        pooled.extend(mine)
    cpu = None if result.cpu is None or not chunks else result.cpu / chunks * 1000 * 1000
    return RunFigures(
        wall=result.wall,
        p50=percentile(pooled, 0.5),
        p99=percentile(pooled, 0.99),
        follower_p99=per_follower,
        missing=missing,
        chunks=chunks,
        cpu_per_1k=cpu,
        peak_rss=result.peak_rss,
    )


async def measure(
    sides: list[Any],
    counts: list[int],
    *,
    runs: int,
    chunks: int,
    delay: float,
    stamps: Path,
    apart: int,
) -> dict[tuple[int, str], list[RunFigures]]:
    table: dict[tuple[int, str], list[RunFigures]] = {}
    for count in counts:
        # Every side's agents alive at once lets the runs interleave; past ``apart`` agents
        # a side (N programs of 100-200 MiB each) runs alone, its runs back to back.
        groups = [sides] if count < apart else [[side] for side in sides]
        for group in groups:
            try:
                await _measure_group(
                    group, count, table, runs=runs, chunks=chunks, delay=delay, stamps=stamps
                )
            except Exception as error:
                # A side that fails at one N (a loaded machine, a daemon that stops answering)
                # is reported; the others still are measured.
                names = ",".join(side.name for side in group)
                print(f"N={count}: {names} failed: {type(error).__name__}: {error}", flush=True)
    return table


async def _measure_group(
    sides: list[Any],
    count: int,
    table: dict[tuple[int, str], list[RunFigures]],
    *,
    runs: int,
    chunks: int,
    delay: float,
    stamps: Path,
) -> None:
    for side in sides:
        print(f"N={count}: starting {count} {side.name} agents", flush=True)
        await side.setup(count, WARM)
    try:
        for run in range(runs):
            order = sides[run % len(sides) :] + sides[: run % len(sides)]
            for side in order:
                tags = [f"{TAG}{index}x{count}r{run}{side.name}" for index in range(count)]
                prompts = [
                    f"[[reply:{reply_text(tag, chunks)}]] [[slow:{chunks}:{delay:g}]]"
                    for tag in tags
                ]
                result = await side.turn(prompts)
                ids = side.ids if isinstance(side, DirectSide) else side.agents
                run_figures = figures(result, ids, tags, read_stamps(stamps, tags))
                table.setdefault((count, side.name), []).append(run_figures)
                print(
                    f"  N={count} run {run + 1} {side.name}: wall {run_figures.wall:.2f} s, "
                    f"p50/p99 {run_figures.p50 * 1000:.1f}/{run_figures.p99 * 1000:.1f} ms, "
                    f"missing {run_figures.missing}, CPU "
                    f"{run_figures.cpu_per_1k or 0:.0f} ms/1k, peak RSS "
                    f"{(run_figures.peak_rss or 0) / MIB:.1f} MiB",
                    flush=True,
                )
    finally:
        for side in sides:
            try:
                await side.teardown()
            except Exception as error:
                print(f"N={count}: {side.name} teardown failed: {error}", flush=True)


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def report(table: dict[tuple[int, str], list[RunFigures]], counts: list[int]) -> bool:
    met = True
    print()
    print(
        f"{'N':>4} {'side':<7} {'runs':>4} {'wall s':>7} {'CPU ms/1k':>10} {'peak RSS':>9} "
        f"{'MiB/agent':>9} {'p50 ms':>7} {'p99 ms':>7} {'missing':>7} {'followers p99 ms':<20}"
    )
    peaks_at_one = {
        side: _median([f.peak_rss for f in rows])
        for (count, side), rows in table.items()
        if count == counts[0]
    }
    growth: dict[tuple[int, str], float] = {}
    for count in counts:
        for side in ("ours", "ts", "direct"):
            rows = table.get((count, side))
            if not rows:
                continue
            cpu = _median([r.cpu_per_1k for r in rows])
            peak = _median([r.peak_rss for r in rows])
            base = peaks_at_one.get(side)
            per_agent = ""
            if peak is not None and base is not None and count > counts[0]:
                growth[(count, side)] = (peak - base) / (count - counts[0])
                per_agent = f"{growth[(count, side)] / MIB:.2f}"
            followers = [
                statistics.median(col) for col in zip(*(r.follower_p99 for r in rows), strict=True)
            ]
            print(
                f"{count:>4} {side:<7} {len(rows):>4} {_median([r.wall for r in rows]):>7.2f} "
                f"{'' if cpu is None else f'{cpu:.0f}':>10} "
                f"{'' if peak is None else f'{peak / MIB:.1f} MiB':>9} {per_agent:>9} "
                f"{_median([r.p50 for r in rows]) * 1000:>7.1f} "  # type: ignore[operator]
                f"{_median([r.p99 for r in rows]) * 1000:>7.1f} "  # type: ignore[operator]
                f"{sum(r.missing for r in rows):>7} "
                f"{'/'.join(f'{v * 1000:.1f}' for v in followers):<20}"
            )
    print()
    for count in counts:
        ours, ts, direct = (table.get((count, s)) for s in ("ours", "ts", "direct"))
        if ours and ts:
            ours_cpu = _median([r.cpu_per_1k for r in ours])
            ts_cpu = _median([r.cpu_per_1k for r in ts])
            assert ours_cpu is not None
            assert ts_cpu is not None
            ok = ours_cpu <= CPU_TARGET * ts_cpu
            met &= ok
            print(
                f"N={count}: daemon CPU per 1k chunks {ours_cpu:.0f} ms vs TypeScript "
                f"{ts_cpu:.0f} ms = {ours_cpu / ts_cpu:.2f}x (target <= {CPU_TARGET}x): "
                f"{'met' if ok else 'MISSED'}"
            )
        if ours and direct and count == LATENCY_AT:
            added = (_median([r.p99 for r in ours]) - _median([r.p99 for r in direct])) * 1000  # type: ignore[operator]
            ts_added = (
                (_median([r.p99 for r in ts]) - _median([r.p99 for r in direct])) * 1000  # type: ignore[operator]
                if ts
                else float("nan")
            )
            ok = added <= LATENCY_TARGET_MS
            met &= ok
            print(
                f"N={count}: p99 latency over direct {added:+.1f} ms (TypeScript {ts_added:+.1f} "
                f"ms; target <= {LATENCY_TARGET_MS:g} ms): {'met' if ok else 'MISSED'}"
            )
        if ours:
            # Within each run: the followers of one turn against each other (runs differ).
            spreads = [(min(r.follower_p99), max(r.follower_p99)) for r in ours]
            best, worst = max(spreads, key=lambda pair: pair[1] - 2 * pair[0])
            missing = sum(r.missing for r in ours)
            ok = missing == 0 and all(high <= 2 * low + 0.010 for low, high in spreads)
            met &= ok
            print(
                f"N={count}: no follower starves: {missing} chunks missing, followers' p99 "
                f"in the least even run {best * 1000:.1f}..{worst * 1000:.1f} ms (target: none "
                f"missing, slowest <= 2x fastest + 10 ms in every run): {'met' if ok else 'MISSED'}"
            )
    for (count, side), value in sorted(growth.items()):
        if side == "ours":
            ts_value = growth.get((count, "ts"))
            ok = value <= MEMORY_TARGET
            met &= ok
            ts_text = "" if ts_value is None else f", TypeScript {ts_value / MIB:.2f} MiB"
            print(
                f"N={count}: memory growth per streaming agent {value / MIB:.2f} MiB{ts_text} "
                f"(target <= 1 MiB): {'met' if ok else 'MISSED'}"
            )
    print("every target met" if met else "some target MISSED")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="1,10,30,100")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.02)
    parser.add_argument("--sides", default="ours,ts,direct")
    parser.add_argument(
        "--apart",
        type=int,
        default=30,
        help="from this N on, each side runs alone (its agents' programs alone in memory)",
    )
    parser.add_argument("--ts-source", type=Path, help="the exported TypeScript tree")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    wanted = args.sides.split(",")
    if "ts" in wanted and args.ts_source is None:
        parser.error("--ts-source is needed for the TypeScript side (or leave ts out of --sides)")
    if not (BIN_DIR / "claude").exists():
        print(f"the pinned agent programs are missing: run `npm ci` in {BIN_DIR.parent.parent}")
        return 2
    with tempfile.TemporaryDirectory(prefix="paseo-bench-concurrency-") as raw:
        root = Path(raw)
        stamps = root / "stamps.jsonl"
        cwd = root / "work"
        cwd.mkdir()
        with stamping_fake(stamps) as fake_url, RefusingProxy() as proxy:
            env = claude_code_env(
                fake_url, root / "claude", proxy_env=proxy.proxy_env(), max_retries=0
            )
            sides: list[Any] = []
            daemon = None
            try:
                if "ours" in wanted:
                    providers = {"claude": {"command": [str(BIN_DIR / "claude")], "env": env}}
                    daemon = Daemon(root / "ours", proxy, providers)
                    sides.append(OursSide(daemon, root, cwd))
                if "ts" in wanted:
                    sides.append(TsSide(args.ts_source.resolve(), root, cwd, env))
                if "direct" in wanted:
                    sides.append(DirectSide(root, cwd, env))
                table = asyncio.run(
                    measure(
                        sides,
                        counts,
                        runs=args.runs,
                        chunks=args.chunks,
                        delay=args.delay,
                        stamps=stamps,
                        apart=args.apart,
                    )
                )
            finally:
                if daemon is not None:
                    daemon.stop()
                for side in sides:
                    if isinstance(side, TsSide):
                        side.stop()
    print(
        f"{args.runs} interleaved runs per N; each agent's reply: {args.chunks} chunks "
        f"{args.delay * 1000:g} ms apart; 3 followers per daemon, each following every agent"
    )
    return 0 if report(table, counts) else 1


if __name__ == "__main__":
    sys.exit(main())
