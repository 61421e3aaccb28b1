"""SIGKILL during appends to a long timeline loses nothing acknowledged, on both drivers.

The home holds one agent with a long timeline (:data:`PREFIX` entries, more than the JSON
driver's cache of lines, so the reopened store reads it from the file by seq). A child process
(``helpers/long_timeline_writer.py``) appends batches to it and acknowledges each; the test
SIGKILLs it a seed-chosen number of acknowledgements plus a few milliseconds in (inside an
append, often), reopens the store in-process and requires: every acknowledged entry present,
byte for byte as written, in seq order with nothing else; the newest entry the last
acknowledged one or at most the batch in flight past it; the prefix intact
at every page read by seq; and the timeline still taking appends after the last seq.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers.long_timeline_writer import AGENT, entry
from paseo_hookspecs.interfaces.store import Store

from paseo.plugins.drivers import load_driver

WRITER = Path(__file__).resolve().parents[2] / "helpers" / "long_timeline_writer.py"
PREFIX = 12_000
"""~4 MB of entries: beyond the JSON driver's 2 MiB cache of lines."""
DRIVERS = ("json", "sqlite")
SEEDS = range(4)
CHILD_DEADLINE = 60.0


def _store(driver: str, home: Path) -> Store:
    store: Store = load_driver("paseo.store", driver)(home, None)
    return store


async def _build(driver: str, home: Path) -> None:
    store = _store(driver, home)
    await store.open()
    try:
        for start in range(1, PREFIX + 1, 1000):
            await store.timeline.append([entry(s) for s in range(start, start + 1000)])
    finally:
        await store.close()


def _kill_writer(driver: str, home: Path, seed: int) -> int:
    """Run the writer, SIGKILL it at a seed-chosen moment; the last acknowledged seq."""
    rng = random.Random(f"long-{seed}")
    kill_after = rng.randrange(1, 40)
    jitter = rng.uniform(0, 0.004)
    stderr_path = home.parent / "writer.stderr"
    with stderr_path.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, str(WRITER), driver, str(home), str(PREFIX + 1)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
    watchdog = threading.Timer(CHILD_DEADLINE, child.kill)
    watchdog.start()
    acked = PREFIX
    acks = 0
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("ack "):
                acked, acks = int(line.split()[1]), acks + 1
                if acks >= kill_after:
                    break
        time.sleep(jitter)
        child.send_signal(signal.SIGKILL)
        for line in child.stdout:  # printed before the kill: acknowledged
            if line.startswith("ack "):
                acked = int(line.split()[1])
        returncode = child.wait(timeout=CHILD_DEADLINE)
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert returncode == -signal.SIGKILL, stderr_path.read_text()
    assert acks >= kill_after, f"the writer stopped early:\n{stderr_path.read_text()}"
    return acked


async def _check(driver: str, home: Path, acked: int, seed: int) -> None:
    store = _store(driver, home)
    await store.open()
    try:
        timeline = store.timeline
        last = await timeline.last(AGENT)
        assert last is not None
        # At most the batch in flight beyond the acknowledged ones (8 entries at most).
        assert acked <= last.seq <= acked + 8, f"seed {seed}: acked {acked}, stored {last.seq}"
        # The appended tail, whole and as written.
        tail = await timeline.read(AGENT, after_seq=PREFIX, limit=1000)
        assert [e.seq for e in tail] == list(range(PREFIX + 1, last.seq + 1)), seed
        assert tail == [entry(e.seq) for e in tail], seed
        # The prefix, page by page at seeded seqs, both directions.
        rng = random.Random(seed)
        for seq in (rng.randrange(1, PREFIX) for _ in range(8)):
            page = await timeline.read(AGENT, after_seq=seq, limit=50)
            assert [e.seq for e in page] == list(range(seq + 1, seq + 51)), (seed, seq)
            back = await timeline.read(AGENT, before_seq=seq, limit=50, tail=True)
            assert [e.seq for e in back] == list(range(max(1, seq - 50), seq)), (seed, seq)
            assert page[0] == entry(seq + 1)
        await timeline.append([entry(last.seq + 1)])
        assert (await timeline.last(AGENT)) == entry(last.seq + 1)
    finally:
        await store.close()


@pytest.mark.parametrize("driver", DRIVERS)
def test_sigkill_while_appending_to_a_long_timeline_loses_nothing_acknowledged(
    tmp_path: Path, driver: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    if driver == "sqlite":
        (home / "config.json").write_text('{"storage": {"driver": "sqlite"}}\n')
    asyncio.run(asyncio.wait_for(_build(driver, home), 120))
    pristine = tmp_path / "pristine"
    subprocess.run(["cp", "-a", str(home), str(pristine)], check=True, timeout=60)
    for seed in SEEDS:
        subprocess.run(["rm", "-rf", str(home)], check=True, timeout=60)
        subprocess.run(["cp", "-a", str(pristine), str(home)], check=True, timeout=60)
        acked = _kill_writer(driver, home, seed)
        asyncio.run(asyncio.wait_for(_check(driver, home, acked, seed), 120))
