"""A hostile soak against one real daemon; prints its figures and checks the targets.

* fuzz: ``--fuzz`` frames (default 100,000) of broken JSON, wrong shapes, unknown methods,
  random params and lone surrogates; every request must be answered and the daemon alive.
* load: ``--connections`` x ``--requests`` (200 x 500) ``server.ping`` calls, all answered.
* memory: a client that never reads asks ``--icon-requests`` (900) times for a 1 MiB project
  icon; the daemon's peak RSS may grow by less than 64 MiB.
* guessing: a 64-way wrong-password flood (its own process) while a local client does store
  writes (``label.create``/``workspace.open``): their p50 must stay under 100 ms; printed next
  to the same writes without the flood.

Run: ``.venv/bin/python bench/soak.py`` (``--ci`` for the bounded form the test suite runs).
Exit status 1 when a target is missed. The last line is the figures as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The hostile clients are shared with the daemon tests (tests/helpers): one implementation.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.daemon_rpc import (
    LiveDaemon,
    hello,
    kill_leftover,
    open_ws,
    rpc,
    start_daemon,
    stop_daemon,
)
from helpers.hostile import icon_hog, memory_kib, project_with_icon

PASSWORD = "correct horse battery"
FLOOD = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "password_flood.py"
RSS_GROWTH_LIMIT_MIB = 64
WRITE_P50_LIMIT_MS = 100
WINDOW = 32
"""Requests a client keeps outstanding (below the daemon's 64 in flight per connection)."""

METHODS = ["server.ping", "server.status", "project.list", "nope.nope", "config.get", "", "x" * 300]


def _fuzz_frame(rng: random.Random, request_id: int) -> tuple[str, bool]:
    """One fuzzed frame and whether it carries ``request_id`` (else it is answered with a
    ``null`` id, being unreadable)."""
    kind = rng.randrange(6)
    if kind == 0:
        junk = "".join(rng.choice('{}[]":,0123456789abc\\ ') for _ in range(rng.randrange(1, 60)))
        return "{" + junk + "]", False  # an object cannot end with "]": never valid JSON
    if kind == 1:
        return json.dumps([{"jsonrpc": "2.0", "id": request_id, "method": "server.ping"}]), False
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": rng.choice(METHODS)}
    if kind == 2:
        message["jsonrpc"] = rng.choice(["1.0", 2, None])
    elif kind == 3:
        message["params"] = rng.choice([[], 3, "s", {"data": "\ud800"}, {"deep": [[[[1]]]]}])
    elif kind == 4:
        message["params"] = {"data": "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(40))}
    text = json.dumps(message)  # ensure_ascii: a lone surrogate travels as its escape
    return text, True


FUZZ_CONNECTIONS = 4
"""The fuzz is spread over a few connections so fewer frames stop at the per-connection rate
limit (those are answered ``rate_limited`` before reaching a method)."""


async def fuzz(live: LiveDaemon, frames: int) -> dict[str, Any]:
    started = time.perf_counter()
    share = frames // FUZZ_CONNECTIONS
    counts = await asyncio.gather(
        *(_fuzz_one(live, share, seed) for seed in range(FUZZ_CONNECTIONS))
    )
    # A fresh connection: the fuzzing ones may be at their rate limit.
    ws = await open_ws(live.url, live.credential)
    await hello(ws, "soak-alive")
    alive = await rpc(ws, "alive", "server.ping", {"data": "alive"})
    await ws.close()
    return {
        "frames": share * FUZZ_CONNECTIONS,
        "unanswered": sum(unanswered for unanswered, _ in counts),
        "rate_limited": sum(limited for _, limited in counts),
        "alive": alive.get("result", {}).get("data") == "alive",
        "seconds": round(time.perf_counter() - started, 2),
    }


async def _fuzz_one(live: LiveDaemon, frames: int, seed: int) -> tuple[int, int]:
    """Fuzz one connection; returns (unanswered, answered rate_limited)."""
    rng = random.Random(seed)
    ws = await open_ws(live.url, live.credential, max_size=None)
    await hello(ws, "soak-fuzz")
    expected_ids: set[int] = set()
    expected_null = 0
    answered_ids = 0
    answered_null = 0
    limited = 0
    sent = 0
    while sent < frames:
        batch = min(WINDOW, frames - sent)
        for _ in range(batch):
            sent += 1
            text, has_id = _fuzz_frame(rng, sent)
            if has_id:
                expected_ids.add(sent)
            else:
                expected_null += 1
            await ws.send(text)
        pending = len(expected_ids) - answered_ids + expected_null - answered_null
        async with asyncio.timeout(30):
            while pending:
                message = json.loads(await ws.recv())
                if "method" in message:
                    continue
                error = message.get("error") or {}
                limited += error.get("data", {}).get("code") == "rate_limited"
                if message.get("id") is None:
                    answered_null += 1
                else:
                    answered_ids += 1
                pending -= 1
    await ws.close()
    return len(expected_ids) + expected_null - answered_ids - answered_null, limited


async def _pinger(live: LiveDaemon, requests: int) -> int:
    ws = await open_ws(live.url, live.credential)
    await hello(ws, "soak-load")
    answered = 0
    next_id = 1
    while next_id <= requests:
        batch = range(next_id, min(next_id + WINDOW, requests + 1))
        for request_id in batch:
            frame = {"jsonrpc": "2.0", "id": request_id, "method": "server.ping"}
            await ws.send(json.dumps(frame))
        async with asyncio.timeout(60):
            for _ in batch:
                message = json.loads(await ws.recv())
                answered += "result" in message
        next_id += len(batch)
    await ws.close()
    return answered


async def load(live: LiveDaemon, connections: int, requests: int) -> dict[str, Any]:
    started = time.perf_counter()
    answered = await asyncio.gather(*(_pinger(live, requests) for _ in range(connections)))
    seconds = time.perf_counter() - started
    return {
        "connections": connections,
        "requests": requests,
        "unanswered": connections * requests - sum(answered),
        "requests_per_second": round(connections * requests / seconds),
    }


async def memory(live: LiveDaemon, requests: int, workdir: Path) -> dict[str, Any]:
    root = workdir / "icon-project"
    root.mkdir()
    project_id = await project_with_icon(live.url, live.credential, root)
    baseline = memory_kib(live.pid)["VmRSS"]
    outcome = await icon_hog(live.url, live.credential, project_id, requests, 150)
    growth = memory_kib(live.pid)["VmHWM"] - baseline
    return {
        "icon_requests": requests,
        "answers_read": outcome.answers,
        "resyncs": outcome.resyncs,
        "close_code": outcome.close_code,
        "rss_growth_mib": round(growth / 1024, 1),
        "unbounded_would_hold_mib": round(requests * 1.37, 1),
    }


async def _writes(ws: Any, tag: str, count: int, workdir: Path) -> list[float]:
    took = []
    for i in range(count):
        started = time.perf_counter()
        if i % 2:
            directory = workdir / f"{tag}-{i}"
            directory.mkdir()
            reply = await rpc(ws, i + 1, "workspace.open", {"path": str(directory)})
        else:
            reply = await rpc(ws, i + 1, "label.create", {"name": f"{tag}-{i}", "color": "sky"})
        assert "result" in reply, reply
        took.append(time.perf_counter() - started)
    return took


def _start_flood(url: str) -> subprocess.Popen[str]:
    flood = subprocess.Popen(
        [sys.executable, str(FLOOD), url, "64", "300"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert flood.stdout is not None
    assert flood.stdout.readline().strip() == "started"
    return flood


async def guessing(live: LiveDaemon, writes: int, workdir: Path) -> dict[str, Any]:
    ws = await open_ws(live.url, live.credential)
    await hello(ws, "soak-writes")
    quiet = await _writes(ws, "quiet", writes, workdir)
    flood = await asyncio.to_thread(_start_flood, live.url)
    try:
        flooded = await _writes(ws, "flooded", writes, workdir)
    finally:
        out, _ = await asyncio.to_thread(flood.communicate, "", 60)
    await ws.close()
    return {
        "writes": writes,
        "quiet_p50_ms": round(statistics.median(quiet) * 1000, 1),
        "flooded_p50_ms": round(statistics.median(flooded) * 1000, 1),
        "flood_statuses": json.loads(out),
    }


def _set_password(home: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "set-password", "--password-stdin"],
        env=dict(os.environ, PASEO_HOME=str(home)),
        input=f"{PASSWORD}\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


async def soak(args: argparse.Namespace, home: Path, workdir: Path) -> dict[str, Any]:
    live = start_daemon(home)
    try:
        figures = {
            "fuzz": await fuzz(live, args.fuzz),
            "load": await load(live, args.connections, args.requests),
            "memory": await memory(live, args.icon_requests, workdir),
            "guessing": await guessing(live, args.writes, workdir),
        }
        figures["daemon_alive"] = (await asyncio.to_thread(_alive, live)) is True
        return figures
    finally:
        stop_daemon(home)
        kill_leftover(live.pid)


def _alive(live: LiveDaemon) -> bool:
    try:
        os.kill(live.pid, 0)
    except ProcessLookupError:
        return False
    return True


def missed(figures: dict[str, Any]) -> list[str]:
    """The targets the figures miss (empty when the soak holds)."""
    problems = []
    if figures["fuzz"]["unanswered"] or not figures["fuzz"]["alive"]:
        problems.append("fuzz: a request went unanswered or the daemon died")
    if figures["load"]["unanswered"]:
        problems.append("load: requests went unanswered")
    if figures["memory"]["rss_growth_mib"] >= RSS_GROWTH_LIMIT_MIB:
        problems.append(f"memory: RSS grew by {RSS_GROWTH_LIMIT_MIB} MiB or more")
    if figures["guessing"]["flooded_p50_ms"] >= WRITE_P50_LIMIT_MS:
        problems.append(f"guessing: store-write p50 reached {WRITE_P50_LIMIT_MS} ms")
    if not figures["daemon_alive"]:
        problems.append("the daemon died")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ci", action="store_true", help="the bounded form (small counts)")
    parser.add_argument("--fuzz", type=int, default=100_000)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--icon-requests", type=int, default=900)
    parser.add_argument("--writes", type=int, default=40)
    args = parser.parse_args()
    if args.ci:
        args.fuzz, args.connections, args.requests = 5_000, 20, 50
        args.icon_requests, args.writes = 150, 20
    with tempfile.TemporaryDirectory(prefix="paseo-soak-") as scratch:
        home, workdir = Path(scratch) / "home", Path(scratch) / "work"
        home.mkdir()
        workdir.mkdir()
        _set_password(home)
        figures = asyncio.run(soak(args, home, workdir))
    f, ld, m, g = figures["fuzz"], figures["load"], figures["memory"], figures["guessing"]
    print(
        f"fuzz: {f['frames']} frames in {f['seconds']} s, unanswered {f['unanswered']} "
        f"({f['rate_limited']} answered rate_limited), daemon alive {f['alive']}"
    )
    print(
        f"load: {ld['connections']} connections x {ld['requests']} requests, unanswered "
        f"{ld['unanswered']}, {ld['requests_per_second']} req/s"
    )
    print(
        f"memory: {m['icon_requests']} x 1 MiB icon unread -> RSS growth {m['rss_growth_mib']} "
        f"MiB (limit {RSS_GROWTH_LIMIT_MIB}; unbounded ~{m['unbounded_would_hold_mib']} MiB), "
        f"close {m['close_code']}"
    )
    print(
        f"guessing: store-write p50 {g['quiet_p50_ms']} ms quiet, {g['flooded_p50_ms']} ms "
        f"under a 64-way wrong-password flood (limit {WRITE_P50_LIMIT_MS}); flood got "
        f"{g['flood_statuses']}"
    )
    problems = missed(figures)
    for problem in problems:
        print(f"MISSED {problem}")
    print(json.dumps(figures))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
