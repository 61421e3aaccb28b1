"""Crash consistency of every store driver: SIGKILL a writer at random moments, then recover.

A child process (``helpers/store_crash_writer.py``) applies a deterministic stream of writes and
acknowledges each one on stdout after it returned. The test kills it after a random number of
acknowledgements plus a random few milliseconds, so the kill lands anywhere: between writes, in
the middle of an atomic file replacement, inside a label transaction. It then opens the store
in-process and requires the recovered state to equal, exactly, the state an uncrashed store
reaches after the acknowledged writes, or after those plus the one that was in flight. That
single comparison proves every acknowledged write survived and nothing is half applied (a label
rename is in the catalog and in every assignment, or nowhere).

``PASEO_CRASH_ITERATIONS`` sets the number of kills per driver and mode (default 8, which keeps
the whole module under a minute; run hundreds with ``PASEO_CRASH_ITERATIONS=300``).
``PASEO_CRASH_SEED`` offsets the seeds; every failure message names the seed that reproduces it
(``-k 'json-labels-seed17'``).
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
from typing import Any

import pytest
from helpers.store_crash_writer import MODES, UNCACHED_JSON, Op, apply, open_driver, plan

from paseo.fs import is_temp_file
from paseo.testing.store_conformance import snapshot

WRITER = Path(__file__).resolve().parents[2] / "helpers" / "store_crash_writer.py"
ITERATIONS = int(os.environ.get("PASEO_CRASH_ITERATIONS", "8"))
SEED_BASE = int(os.environ.get("PASEO_CRASH_SEED", "0"))
DRIVERS = ("json", UNCACHED_JSON, "sqlite")
CHILD_DEADLINE = 60.0
"""Seconds after which a writer that was neither killed nor finished is killed anyway."""


def _kill_writer(driver: str, home: Path, seed: int, mode: str, ops: list[Op]) -> int:
    """Run the writer and SIGKILL it at a seed-chosen moment; the number of acknowledged
    writes."""
    rng = random.Random(f"kill-{seed}")
    kill_after = rng.randrange(0, len(ops))
    # The jitter is the point of the harness: after the chosen acknowledgement the child keeps
    # writing, so a few milliseconds place the kill somewhere inside the following write(s).
    jitter = rng.uniform(0, 0.006)
    stderr_path = home.parent / f"{home.name}.stderr"
    with stderr_path.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, str(WRITER), driver, str(home), str(seed), mode],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
    watchdog = threading.Timer(CHILD_DEADLINE, child.kill)
    watchdog.start()
    acks = 0
    finished = False
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("ack "):
                acks += 1
            elif line == "done\n":
                finished = True
            if (line == "ready\n" and kill_after == 0) or (
                line.startswith("ack ") and acks >= kill_after
            ):
                break
        time.sleep(jitter)
        child.send_signal(signal.SIGKILL)
        # Acknowledgements already in the pipe were printed before the kill: they count.
        for line in child.stdout:
            if line.startswith("ack "):
                acks += 1
            elif line == "done\n":
                finished = True
        returncode = child.wait(timeout=CHILD_DEADLINE)
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
    if returncode != -signal.SIGKILL and not finished:
        raise AssertionError(
            f"seed {seed}: writer exited {returncode} on its own:\n{stderr_path.read_text()}"
        )
    return acks


async def _reference_states(
    driver: str, home: Path, ops: list[Op], acked: int
) -> list[dict[str, Any]]:
    """Snapshots of an uncrashed store after ``acked`` writes and after one more (if any)."""
    await asyncio.to_thread(home.mkdir, parents=True)
    store = open_driver(driver, home)
    await store.open()
    try:
        for op in ops[:acked]:
            await apply(store, op)
        states = [await snapshot(store)]
        if acked < len(ops):
            await apply(store, ops[acked])
            states.append(await snapshot(store))
        return states
    finally:
        await store.close()


def _first_difference(actual: Any, expected: Any, path: str = "") -> str:
    """Where two snapshots first differ, for a readable failure message."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        for key in sorted(set(actual) | set(expected), key=str):
            if actual.get(key) != expected.get(key):
                return _first_difference(actual.get(key), expected.get(key), f"{path}.{key}")
    if isinstance(actual, list) and isinstance(expected, list):
        if len(actual) != len(expected):
            return f"{path}: {len(actual)} items, expected {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            if a != e:
                return _first_difference(a, e, f"{path}[{index}]")
    return f"{path}: {actual!r} != {expected!r}"


def _temp_files(home: Path) -> list[Path]:
    return [path for path in home.rglob("*") if is_temp_file(path)]


def _assert_labels_consistent(state: dict[str, Any], seed: int) -> None:
    catalog = {label["name"] for label in state["labels"]}
    for workspace in state["workspaces"]:
        stray = set(workspace.get("labels") or []) - catalog
        assert not stray, (
            f"seed {seed}: workspace {workspace['workspaceId']} holds labels outside the "
            f"catalog {sorted(catalog)}: {sorted(stray)}"
        )


async def _recover_and_check(
    driver: str,
    home: Path,
    reference_home: Path,
    seed: int,
    mode: str,
    ops: list[Op],
    acked: int,
) -> None:
    store = open_driver(driver, home)
    await store.open()
    try:
        # The JSON driver reads (and cleans) the agent folders after open, beside the serving
        # store: recovery is complete once its index check settled.
        await store.agents.settled()
        assert store.quarantined == [], f"seed {seed}: recovery quarantined {store.quarantined}"
        leftovers = await asyncio.to_thread(_temp_files, home)
        assert not leftovers, f"seed {seed}: temporary files survived recovery: {leftovers}"
        recovered = await snapshot(store)
        _assert_labels_consistent(recovered, seed)
        states = await _reference_states(driver, reference_home, ops, acked)
        if recovered not in states:
            differences = "\n".join(
                f"  vs state after {acked + i} writes: {_first_difference(recovered, s)}"
                for i, s in enumerate(states)
            )
            raise AssertionError(
                f"seed {seed} ({driver}, {mode}): recovered state is neither the state after the "
                f"{acked} acknowledged writes nor after the one in flight "
                f"({ops[acked][0] if acked < len(ops) else 'none'}):\n{differences}"
            )
        # The recovered store accepts writes, including a label transaction.
        await store.labels.create("After crash", "red")
        await store.labels.edit("after crash", new_name="Recovered", now="2030-01-01T00:00:00Z")
        expected = await snapshot(store)
    finally:
        await store.close()
    # Recovery is idempotent: a second open sees exactly the same thing.
    store = open_driver(driver, home)
    await store.open()
    try:
        assert await snapshot(store) == expected, f"seed {seed}: second recovery differs"
    finally:
        await store.close()


@pytest.mark.parametrize("seed", range(SEED_BASE, SEED_BASE + ITERATIONS), ids="seed{}".format)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("driver", DRIVERS)
def test_sigkill_loses_no_acknowledged_write(
    driver: str, mode: str, seed: int, tmp_path: Path
) -> None:
    ops = plan(seed, mode)
    home = tmp_path / "home"
    home.mkdir()
    acked = _kill_writer(driver, home, seed, mode, ops)
    asyncio.run(
        asyncio.wait_for(
            _recover_and_check(driver, home, tmp_path / "reference", seed, mode, ops, acked),
            timeout=120,
        )
    )


def _run_until_it_kills_itself(home: Path, seed: int, kill_at: str) -> int:
    """Run the json writer in ``usage`` mode that SIGKILLs itself at ``kill_at``; the number
    of acknowledged writes."""
    child = subprocess.run(
        [sys.executable, str(WRITER), "json", str(home), str(seed), "usage"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", PASEO_CRASH_KILL_AT=kill_at),
        timeout=CHILD_DEADLINE,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, (
        f"{kill_at}: writer exited {child.returncode}: {child.stderr}"
    )
    return sum(1 for line in child.stdout.splitlines() if line.startswith("ack "))


@pytest.mark.parametrize("nth", [1, 4])
@pytest.mark.parametrize("step", ["timeline", "day", "settle"])
def test_sigkill_inside_a_turn_end_keeps_its_usage_with_its_entries(
    step: str, nth: int, tmp_path: Path
) -> None:
    """Killed between the steps of a turn end's write (json: intent, timeline, day file,
    settle), the store recovers both the entries and their usage record, or neither: the
    turn end in flight is absent when killed before its timeline append; the day file and
    the settle come after the turn end is acknowledged (off its path), and the store then
    holds every acknowledged write with its usage, plus at most the one in flight."""
    seed = 5
    ops = plan(seed, "usage")
    home = tmp_path / "home"
    home.mkdir()
    acked = _run_until_it_kills_itself(home, seed, f"{step}:{nth}")
    if step == "timeline":
        assert ops[acked][0] == "turn_end"
    else:
        assert any(op[0] == "turn_end" for op in ops[:acked])

    async def check() -> None:
        store = open_driver("json", home)
        await store.open()
        try:
            recovered = await snapshot(store)
        finally:
            await store.close()
        states = await _reference_states("json", tmp_path / "reference", ops, acked)
        if step == "timeline":
            assert recovered == states[0], _first_difference(recovered, states[0])
        else:
            assert recovered in states, "\n".join(
                _first_difference(recovered, state) for state in states
            )

    asyncio.run(asyncio.wait_for(check(), timeout=120))
