"""The child process of the long-timeline crash test: appends to one agent's long timeline.

Run as ``python long_timeline_writer.py DRIVER HOME FIRST_SEQ``: opens the driver on ``HOME``
(whose agent already has a long timeline ending at ``FIRST_SEQ - 1``), prints ``ready``, then
appends batches of entries (1 to 8 entries each, through the store's ``append``) forever,
printing ``ack <seq>`` (the batch's last seq, flushed) after each append returned: the parent
SIGKILLs it somewhere in that stream.
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

from paseo_hookspecs.records import TimelineEntry

from paseo.plugins.drivers import load_driver
from paseo.testing.store_conformance import timeline_entry_data

AGENT = "5d1e8f3a-2b4c-4d6e-8f90-a1b2c3d4e5f6"


def entry(seq: int) -> TimelineEntry:
    """Entry ``seq`` of the agent (a few hundred bytes; its text names its seq)."""
    data = timeline_entry_data(AGENT, seq)
    data["event"]["item"]["text"] += " " + "x" * (seq % 300)
    return TimelineEntry.model_validate(data)


async def _write(driver: str, home: Path, first: int) -> None:
    store = load_driver("paseo.store", driver)(home, None)
    await store.open()
    print("ready", flush=True)
    rng = random.Random(first)
    seq = first
    while True:
        batch = [entry(s) for s in range(seq, seq + rng.randint(1, 8))]
        await store.timeline.append(batch)
        seq += len(batch)
        print(f"ack {seq - 1}", flush=True)


def main(argv: list[str]) -> int:
    driver, home, first = argv
    asyncio.run(_write(driver, Path(home), int(first)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
