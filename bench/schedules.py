"""What 10,000 schedules cost an idle daemon, next to an empty home measured in the same run.

Two daemons run side by side: one on an empty home (the baseline), one on a home holding
``--schedules`` active schedule files (cron cadences in several time zones, slots spread over
the coming days so none fires during the measurement). After both are ready and have settled,
the same ``--seconds`` window is measured on each: CPU seconds used, wake-ups (voluntary
context switches of every daemon thread) per minute, and resident memory. The differences are
what the schedules cost; the targets are no measurable CPU and less than 10 MB.

The memory difference has two owners, so the same home is then opened in this process and
measured with tracemalloc: the JSON store driver's cache of the records (it keeps every record
in memory by design) and what the schedules service itself keeps (its index) once started.

With ``--store sqlite`` both homes use the SQLite driver (the loaded one is migrated with
``paseo store migrate``), whose records stay on disk.

Run: ``.venv/bin/python bench/schedules.py [--schedules 10000] [--seconds 60] [--store sqlite]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

ZONES = ("Europe/Paris", "America/New_York", "Asia/Tokyo", None)
MEMORY_TARGET_MB = 10.0


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_schedules(home: Path, count: int) -> None:
    """``count`` schedule files as the daemon writes them, ids 00000000 upwards."""
    folder = home / "schedules"
    folder.mkdir(parents=True)
    rng = random.Random(15)
    now = datetime.now(UTC)
    for index in range(count):
        zone = ZONES[index % len(ZONES)]
        cadence: dict[str, Any] = {
            "type": "cron",
            "expression": f"{rng.randrange(60)} {rng.randrange(24)} * * *",
        }
        if zone is not None:
            cadence["timezone"] = zone
        # Well past the window, so nothing fires while it is measured.
        next_run = now + timedelta(hours=2, seconds=rng.randrange(3 * 86400))
        record: dict[str, Any] = {
            "id": f"{index:08x}",
            "name": f"bench-{index}",
            "prompt": "summarise what changed",
            "cadence": cadence,
            "target": {"type": "new-agent", "config": {"provider": "claude", "cwd": "/tmp"}},
            "status": "active",
            "createdAt": iso(now),
            "updatedAt": iso(now),
            "nextRunAt": iso(next_run),
            "lastRunAt": None,
            "pausedAt": None,
            "expiresAt": None,
            "maxRuns": None,
            "runs": [],
        }
        (folder / f"{record['id']}.json").write_text(json.dumps(record, indent=2))


def start(home: Path) -> tuple[psutil.Process, dict[str, str], float]:
    env = {**os.environ, "PASEO_HOME": str(home), "PASEO_LISTEN": "127.0.0.1:0"}
    began = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "start", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"daemon failed to start:\n{result.stderr}")
    took = time.monotonic() - began
    return psutil.Process(int(json.loads(result.stdout)["pid"])), env, took


def stop(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "stop", "--force"],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )


def sample(process: psutil.Process) -> tuple[float, int, int]:
    """CPU seconds, voluntary context switches (all threads), RSS bytes."""
    with process.oneshot():
        cpu = process.cpu_times()
        switches = process.num_ctx_switches().voluntary
        rss = process.memory_info().rss
    return cpu.user + cpu.system, switches, rss


class NoAgents:
    """The agents port of a scheduler that must not fire during the measurement."""

    async def lookup(self, reference: str) -> None:
        raise AssertionError("no schedule may fire during the bench")

    def default_provider(self) -> str | None:
        return None

    async def create(self, config: Any, prompt: str, labels: Mapping[str, str]) -> str:
        raise AssertionError("no schedule may fire during the bench")

    async def prompt(self, agent_id: str, prompt: str, message_id: str) -> None:
        raise AssertionError("no schedule may fire during the bench")

    async def wait_turn(self, agent_id: str, *, within: float) -> Any:
        raise AssertionError("no schedule may fire during the bench")


class Publisher:
    def register_stream(self, name: str, access: frozenset[str]) -> None:
        return None

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        return None


class Config:
    resolved: Any = None


def use_sqlite(empty: Path, loaded: Path) -> None:
    migrate = ["store", "migrate", "--from", "json", "--to", "sqlite", "--switch"]
    subprocess.run(
        [sys.executable, "-m", "paseo", *migrate],
        env={**os.environ, "PASEO_HOME": str(loaded)},
        capture_output=True,
        timeout=600,
        check=True,
    )
    (empty / "config.json").write_text((loaded / "config.json").read_text())


async def split_memory(home: Path, driver: str) -> tuple[float, float]:
    """MB retained by the open store, then by the started schedules service."""
    from paseo_hookspecs.interfaces.store import Store

    from paseo.schedules.service import ScheduleService

    tracemalloc.start()
    gc.collect()
    start = tracemalloc.get_traced_memory()[0]
    store: Store
    if driver == "sqlite":
        from paseo_store_sqlite import SqliteStore

        store = SqliteStore(home)
    else:
        from paseo_store_json import JsonStore

        store = JsonStore(home)
    await store.open()
    gc.collect()
    opened = tracemalloc.get_traced_memory()[0]
    service = ScheduleService(
        store=store, publisher=Publisher(), agents=NoAgents(), config=Config()
    )
    await service.start()
    gc.collect()
    started = tracemalloc.get_traced_memory()[0]
    await service.stop()
    await store.close()
    tracemalloc.stop()
    return (opened - start) / 2**20, (started - opened) / 2**20


def verdict(megabytes: float) -> str:
    return "met" if megabytes < MEMORY_TARGET_MB else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--schedules", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=60.0, help="measurement window")
    parser.add_argument("--settle", type=float, default=10.0, help="wait after start")
    parser.add_argument("--store", choices=("json", "sqlite"), default="json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        empty, loaded = root / "empty", root / "loaded"
        empty.mkdir()
        write_schedules(loaded, args.schedules)
        if args.store == "sqlite":
            use_sqlite(empty, loaded)
        envs = []
        try:
            base, env, base_start = start(empty)
            envs.append(env)
            full, env, full_start = start(loaded)
            envs.append(env)
            time.sleep(args.settle)
            before = [sample(base), sample(full)]
            time.sleep(args.seconds)
            after = [sample(base), sample(full)]
        finally:
            for env in envs:
                stop(env)
        store_mb, service_mb = asyncio.run(split_memory(loaded, args.store))
    per_minute = 60.0 / args.seconds
    rows = []
    for label, b, a, took in (
        ("empty home", before[0], after[0], base_start),
        (f"{args.schedules} schedules", before[1], after[1], full_start),
    ):
        cpu = (a[0] - b[0]) * per_minute
        wakeups = (a[1] - b[1]) * per_minute
        rows.append((label, took, cpu, wakeups, a[2] / 2**20))
    print(
        f"{args.store} store; idle window {args.seconds:.0f}s after {args.settle:.0f}s settle; "
        "per minute:"
    )
    print(f"{'home':<18}{'start s':>9}{'CPU s/min':>11}{'wake-ups/min':>14}{'RSS MB':>9}")
    for label, took, cpu, wakeups, rss in rows:
        print(f"{label:<18}{took:>9.2f}{cpu:>11.3f}{wakeups:>14.0f}{rss:>9.1f}")
    extra_rss = rows[1][4] - rows[0][4]
    print(
        f"cost of the schedules: CPU {rows[1][2] - rows[0][2]:+.3f} s/min, "
        f"wake-ups {rows[1][3] - rows[0][3]:+.0f}/min, memory {extra_rss:+.1f} MB "
        f"(target < {MEMORY_TARGET_MB:.0f} MB: {verdict(extra_rss)})"
    )
    print(
        f"memory retained (tracemalloc): {args.store} store once open {store_mb:.1f} MB, "
        f"schedules service {service_mb:.1f} MB "
        f"(target < {MEMORY_TARGET_MB:.0f} MB: {verdict(service_mb)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
