"""One agent with a 1 GiB timeline (a million entries of ~1 KiB), on both store drivers (issue 36,
item 3): the real daemon opens it, serves its last page and pages at random seqs, and what the
timeline costs it in memory, each next to the same daemon on a home whose one agent has a tiny
timeline (:data:`TINY_ENTRIES` entries), measured in the same run.

Per driver, over ``--runs`` interleaved rounds (tiny home, then long home, each a fresh daemon):

* open: the first ``agent.timeline`` of the agent after the daemon started (``tail``, a page of
  :data:`PAGE` entries): loading the agent, its timeline's last seq and epoch, the newest page.
  Another agent's timeline (:data:`WARMUP_ENTRIES` entries) is fetched just before, so the
  figure is the agent's open, not the daemon's first call of the method.
* last page: the same call again (median of 5).
* pages by seq: :data:`PAGES` calls at random seqs, half ``after`` a cursor, half ``before`` one
  (``tail``), each checked to hold exactly the expected seqs; p50 and max.
* RSS growth: the daemon's RSS after all of it, minus the tiny-timeline daemon's after the same
  calls.

Targets: open, last page and every page (p50 and max) <= 50 ms; RSS growth <= 16 MiB. Figures
are medians over the rounds (max: the median of each round's max). The daemon's CPU time per
page (all its threads, from ``psutil``; the mean over the pages) is printed beside them,
without a target: on a loaded machine it is what the daemon itself spent, where the wall time
also counts the wait for a core.

Homes are built once and cached under :data:`CACHE` (written in each driver's own format, not
through a daemon: the JSON driver's ``timelines/{agentId}.jsonl`` lines, the SQLite driver's
``timeline`` rows; one line per entry checked against the driver's own encoder first).

Run: ``.venv/bin/python bench/timeline_long.py`` (``--entries 100000`` for a quicker pass,
``--drivers json``, ``--runs 3``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon import start_daemon, stop_daemon
from store import build_records, fill_through_driver, write_json_home

CACHE = Path("/tmp/paseo-bench-timeline-long")
MIB = 1024 * 1024
TINY_ENTRIES = 1_000
WARMUP_ENTRIES = 10
"""The other agent of every home: its timeline is fetched first, so that the open measured is
the agent's, not the daemon's first ``agent.timeline`` call (its lazily built code paths)."""
PAGE = 200
PAGES = 20
TEXT_BYTES = 880
"""Filler text per entry: with the rest of the entry about 1 KiB a line."""
EPOCH = "bench-epoch"

TARGET_MS = 50.0
TARGET_RSS_MIB = 16.0


def _entry(agent_id: str, seq: int) -> dict[str, Any]:
    from paseo.testing.store_conformance import iso

    filler = ("lorem ipsum dolor sit amet " * 40)[: TEXT_BYTES - 20]
    return {
        "agentId": agent_id,
        "seq": seq,
        "epoch": EPOCH,
        "timestamp": iso(seq),
        "event": {
            "type": "timeline",
            "provider": "claude",
            "item": {
                "type": "assistant_message",
                "text": f"step {seq:>10}: {filler}",
                "messageId": f"m-{seq}",
            },
        },
    }


def _check_format(agent_id: str, encoded: bytes, driver: str) -> None:
    """The bench's encoding of an entry is byte for byte the driver's own."""
    from paseo_hookspecs.records import TimelineEntry

    entry = TimelineEntry.model_validate(_entry(agent_id, 7))
    if driver == "json":
        from paseo_store_json._timeline import encode_line

        theirs = encode_line(entry)
    else:
        from paseo_store_sqlite._codec import checked_text

        theirs = checked_text(TimelineEntry, entry).encode()
    if encoded != theirs:
        raise SystemExit(f"the bench encodes entries unlike the {driver} driver:\n{theirs!r}")


def _records() -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The project, its workspace and two closed agents: the measured one and the warm-up."""
    project, workspaces, agents = build_records(2, 1)
    for agent in agents:
        agent["lastStatus"] = "closed"
    return project, workspaces, agents


def build(driver: str, entries: int) -> tuple[Path, str]:
    """The cached home of ``driver`` with one agent of ``entries`` entries: (home, agent id)."""
    root = CACHE / f"{driver}-{entries}"
    home = root / "home"
    marker = root / "built.json"
    project, workspaces, agents = _records()
    agent, warmup = agents
    if marker.exists():
        return home, agent["id"]
    shutil.rmtree(root, ignore_errors=True)
    home.mkdir(parents=True)
    start = time.perf_counter()
    agent_id = agent["id"]
    _check_format(agent_id, orjson.dumps(_entry(agent_id, 7)) + b"\n", "json")
    if driver == "json":
        write_json_home(home, project, workspaces, agents)
        timelines = home / "timelines"
        timelines.mkdir(parents=True, exist_ok=True)
        for one, count in ((agent, entries), (warmup, WARMUP_ENTRIES)):
            with open(timelines / f"{one['id']}.jsonl", "wb", buffering=8 * MIB) as out:
                for seq in range(1, count + 1):
                    out.write(orjson.dumps(_entry(one["id"], seq)) + b"\n")
    else:
        _check_format(agent_id, orjson.dumps(_entry(agent_id, 7)), "sqlite")
        _sqlite_home(home, project, workspaces, agents, entries)
    size = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    marker.write_text(json.dumps({"entries": entries, "bytes": size}))
    print(
        f"built {driver} home: {entries:,} entries, {size / MIB:,.0f} MiB "
        f"in {time.perf_counter() - start:.0f} s",
        flush=True,
    )
    return home, agent_id


def _sqlite_home(
    home: Path,
    project: dict[str, Any],
    workspaces: list[dict[str, Any]],
    agents: list[dict[str, Any]],
    entries: int,
) -> None:
    from paseo_hookspecs import STORE_GROUP

    from paseo.plugins.drivers import load_driver

    (home / "config.json").write_text('{"storage": {"driver": "sqlite"}}\n')

    async def schema_and_records() -> None:
        store = load_driver(STORE_GROUP, "sqlite")(home, None)
        await store.open()
        try:
            await fill_through_driver(store, project, workspaces, agents)
        finally:
            await store.close()

    asyncio.run(schema_and_records())
    conn = sqlite3.connect(home / "paseo.db", isolation_level=None)
    try:
        # The build only: the daemon's own connections keep synchronous=FULL.
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("BEGIN")
        batch: list[tuple[Any, ...]] = []
        for agent, count in zip(agents, (entries, WARMUP_ENTRIES), strict=True):
            for seq in range(1, count + 1):
                data = _entry(agent["id"], seq)
                text = orjson.dumps(data).decode()
                batch.append((agent["id"], seq, EPOCH, data["timestamp"], text))
                if len(batch) >= 20_000:
                    conn.executemany("INSERT INTO timeline VALUES (?, ?, ?, ?, ?)", batch)
                    batch.clear()
        conn.executemany("INSERT INTO timeline VALUES (?, ?, ?, ?, ?)", batch)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def env_for(home: Path) -> dict[str, str]:
    return {**os.environ, "PASEO_HOME": str(home), "PASEO_LISTEN": "127.0.0.1:0"}


def _seqs(result: dict[str, Any]) -> list[int]:
    return [entry["seq"] for entry in result["entries"]]


def measure(home: Path, agent_id: str, entries: int, rng: random.Random) -> dict[str, float]:
    """One fresh daemon on ``home``: the calls of the module docstring, timed (seconds) and its
    RSS after them (bytes)."""
    from paseo.client.light import LightClient

    env = env_for(home)
    stop_daemon(env)
    report = start_daemon(home, env)
    try:
        process = psutil.Process(report["pid"])
        with LightClient(home=home, env=env, request_timeout=120) as client:

            cpu: list[float] = []

            def timed(params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
                before = process.cpu_times()
                start = time.perf_counter()
                result: dict[str, Any] = client.call("agent.timeline", params)
                took = time.perf_counter() - start
                after = process.cpu_times()
                cpu.append(after.user + after.system - before.user - before.system)
                return took, result

            warmup = _records()[2][1]["id"]
            timed({"agentId": warmup, "tail": True, "limit": PAGE})
            tail = {"agentId": agent_id, "tail": True, "limit": PAGE}
            opened, first = timed(tail)
            want = list(range(max(1, entries - PAGE + 1), entries + 1))
            if _seqs(first) != want or first["epoch"] != EPOCH:
                raise SystemExit(f"the last page is wrong: {_seqs(first)[:3]}...")
            last = statistics.median(timed(tail)[0] for _ in range(5))
            pages: list[float] = []
            cpu.clear()
            for number in range(PAGES):
                seq = rng.randrange(1, entries + 1)
                cursor = {"epoch": EPOCH, "seq": seq}
                if number % 2:
                    took, result = timed({"agentId": agent_id, "after": cursor, "limit": PAGE})
                    want = list(range(seq + 1, min(entries, seq + PAGE) + 1))
                else:
                    params = {"agentId": agent_id, "before": cursor, "limit": PAGE, "tail": True}
                    took, result = timed(params)
                    want = list(range(max(1, seq - PAGE), seq))
                if _seqs(result) != want:
                    raise SystemExit(f"the page at seq {seq} is wrong: {_seqs(result)[:3]}...")
                pages.append(took)
        return {
            "open": opened,
            "last": last,
            "page p50": statistics.median(pages),
            "page max": max(pages),
            "rss": float(process.memory_info().rss),
            "page cpu mean": sum(cpu) / len(cpu),
        }
    finally:
        stop_daemon(env)


def run_driver(driver: str, entries: int, runs: int) -> bool:
    long_home, agent_id = build(driver, entries)
    tiny_home, tiny_id = build(driver, TINY_ENTRIES)
    rng = random.Random(36)
    tiny: list[dict[str, float]] = []
    long: list[dict[str, float]] = []
    for _ in range(runs):
        tiny.append(measure(tiny_home, tiny_id, TINY_ENTRIES, rng))
        long.append(measure(long_home, agent_id, entries, rng))

    def median(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(row[key] for row in rows)

    size = json.loads((CACHE / f"{driver}-{entries}" / "built.json").read_text())["bytes"]
    print(
        f"\n{driver}: one agent, {entries:,} entries ({size / MIB:,.0f} MiB home) vs "
        f"{TINY_ENTRIES:,} entries; {runs} rounds, pages of {PAGE}"
    )
    print(f"  {'figure':<14}{'long':>12}{'tiny':>12}{'target':>12}  result")
    met = True
    for key in ("open", "last", "page p50", "page max"):
        value, base = median(long, key) * 1000, median(tiny, key) * 1000
        ok = value <= TARGET_MS
        met &= ok
        print(
            f"  {key + ' ms':<14}{value:>12.1f}{base:>12.1f}{'<= 50':>12}  "
            f"{'met' if ok else 'MISSED'}"
        )
    for key in ("page cpu mean",):
        # The daemon's own CPU time per page (all threads; the mean over the pages, as the
        # kernel counts CPU time in 10 ms ticks): what the wall times are made of when the
        # machine is not loaded; no target.
        value, base = median(long, key) * 1000, median(tiny, key) * 1000
        print(f"  {key + ' ms':<14}{value:>12.1f}{base:>12.1f}")
    growth = (median(long, "rss") - median(tiny, "rss")) / MIB
    ok = growth <= TARGET_RSS_MIB
    met &= ok
    print(
        f"  {'rss MiB':<14}{median(long, 'rss') / MIB:>12.1f}{median(tiny, 'rss') / MIB:>12.1f}"
        f"{'':>12}"
    )
    print(
        f"  {'rss growth MiB':<14}{growth:>12.1f}{'':>12}{'<= 16':>12}  {'met' if ok else 'MISSED'}"
    )
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--drivers", default="json,sqlite")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    met = True
    for driver in args.drivers.split(","):
        met &= run_driver(driver, args.entries, args.runs)
    print("\nevery target met" if met else "\nsome targets MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
