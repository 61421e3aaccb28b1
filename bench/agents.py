"""Agent manager cost, each figure next to a baseline measured in the same run.

* **Turn overhead**: one prompt → reply turn through the daemon (``agent.send`` +
  ``agent.wait`` over the WebSocket, the manager numbering, persisting and publishing every
  event) against the same agent program driven directly over its stdin/stdout. Samples are
  interleaved; medians and their ratio are printed (target: at most 1.25x).
* **Timeline fan-out**: one agent emits ``--events`` separate timeline entries while
  ``--subscribers`` clients follow its stream; prints entries/s per subscriber and deliveries/s
  (entries x subscribers), with the direct program's own line rate as the baseline.
* **Idle memory**: the daemon's RSS with no agent, then with ``--idle`` idle agents (each with a
  live agent process), and the increment per agent.

The agent program is the scripted test agent of ``tests/integration/agents/scripted_agent``
(loaded as a directory plugin); real CLIs can be added as further programs the same way.
Run: ``.venv/bin/python bench/agents.py`` (``--turns``, ``--events``, ``--subscribers``,
``--idle``).
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
import time
from pathlib import Path
from typing import Any

import psutil

from paseo.client import PaseoClient

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "tests" / "integration" / "agents" / "scripted_agent"
PROGRAM = PLUGIN / "paseo_scripted" / "program.py"
TARGET = 1.25


# -- the direct baseline -------------------------------------------------------------------------


class Direct:
    """The agent program without Paseo: JSON lines over its pipes."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-u", str(PROGRAM)],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert json.loads(self._line())["type"] == "ready"

    def _line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline()

    def turn(self, text: str) -> int:
        """Send one prompt, read until the turn ends; returns the lines received."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"type": "prompt", "text": text}) + "\n")
        self.process.stdin.flush()
        lines = 0
        while True:
            message = json.loads(self._line())
            lines += 1
            if message["type"] in ("done", "failed", "canceled"):
                return lines

    def close(self) -> None:
        self.process.kill()
        self.process.wait(10)


# -- the daemon ---------------------------------------------------------------------------------


def start_daemon(home: Path) -> int:
    home.mkdir(parents=True)
    plugins = {"scripted": {"source": "directory", "path": str(PLUGIN)}}
    (home / "config.json").write_text(json.dumps({"plugins": plugins}))
    env = dict(os.environ, PASEO_HOME=str(home), PASEO_LISTEN="127.0.0.1:0")
    result = subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "start", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(json.loads(result.stdout)["pid"])


def stop_daemon(home: Path) -> None:
    env = dict(os.environ, PASEO_HOME=str(home))
    subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "stop", "--force"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )


async def create(client: PaseoClient, cwd: Path, prompt: str | None = None) -> str:
    params: dict[str, Any] = {"provider": "scripted", "cwd": str(cwd)}
    if prompt:
        params["initialPrompt"] = prompt
    agent = (await client.call("agent.create", params))["agent"]["id"]
    await wait_idle(client, agent)
    return str(agent)


async def wait_idle(client: PaseoClient, agent: str) -> None:
    result = await client.call("agent.wait", {"agentId": agent, "timeout": 60}, timeout=90)
    if result["outcome"] != "idle":
        raise RuntimeError(f"agent {agent} ended {result['outcome']}: {result.get('error')}")


async def daemon_turn(client: PaseoClient, agent: str, text: str) -> None:
    await client.call("agent.send", {"agentId": agent, "text": text})
    await wait_idle(client, agent)


# -- measurements -------------------------------------------------------------------------------


async def turn_overhead(home: Path, cwd: Path, turns: int, prompt: str) -> tuple[float, float]:
    direct = Direct(cwd)
    async with PaseoClient(home=home) as client:
        agent = await create(client, cwd, "warm up")
        daemon_times: list[float] = []
        direct_times: list[float] = []
        try:
            for index in range(turns):
                started = time.perf_counter()
                await asyncio.to_thread(direct.turn, f"{prompt} {index}")
                direct_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                await daemon_turn(client, agent, f"{prompt} {index}")
                daemon_times.append(time.perf_counter() - started)
        finally:
            direct.close()
    return statistics.median(direct_times), statistics.median(daemon_times)


class Subscriber:
    """One client following the agent's stream; a gap (its queue overflowed and the daemon
    sent ``server.resync``) is filled from ``agent.timeline`` as a real client would."""

    def __init__(self, home: Path, agent: str) -> None:
        self.client = PaseoClient(home=home)
        self.agent = agent
        self.seq = 0
        self.epoch = ""
        self.entries = 0
        self.refetched = 0
        self.refetching = False
        self.task: asyncio.Future[None] | None = None
        self.done = asyncio.Event()

    async def start(self) -> None:
        await self.client.connect()
        self.client.on("agent.event", lambda _m, params: self._take(params["entry"]))
        self.client.on_gap(lambda _stream, _expected, _got: self._refetch())
        # (a gap in the stream's own sequence numbers; missing timeline seqs are caught too)
        await self.client.subscribe([f"agent:{self.agent}"])
        last = await self.client.call(
            "agent.timeline", {"agentId": self.agent, "limit": 1, "tail": True}
        )
        self.seq = last["last"]["seq"] if last["last"] else 0
        self.epoch = last["epoch"]

    def _take(self, entry: dict[str, Any], *, fetched: bool = False) -> None:
        if entry["seq"] <= self.seq:
            return
        if entry["seq"] != self.seq + 1:
            # Entries are missing in between: hold the cursor and read them from the store.
            if not self.refetching:
                self.refetching = True
                self.task = asyncio.ensure_future(self._refetch())
            return
        self.seq = entry["seq"]
        event = entry["event"]
        if event["type"] == "timeline" and event["item"]["type"] == "assistant_message":
            self.entries += 1
            self.refetched += fetched
        if event["type"] == "turn_completed":
            self.done.set()

    async def _refetch(self) -> None:
        self.refetching = True
        try:
            while True:
                page = await self.client.call(
                    "agent.timeline",
                    {
                        "agentId": self.agent,
                        "after": {"epoch": self.epoch, "seq": self.seq},
                        "limit": 1000,
                    },
                )
                for entry in page["entries"]:
                    self._take(entry, fetched=True)
                if not page["hasMore"]:
                    return
        finally:
            self.refetching = False


async def fan_out(home: Path, cwd: Path, events: int, subscribers: int) -> tuple[float, float, int]:
    """Seconds for the direct program to emit ``events`` lines; for every subscriber to hold
    ``events`` entries through the daemon; and how many entries came by re-fetch."""
    direct = Direct(cwd)
    try:
        started = time.perf_counter()
        await asyncio.to_thread(direct.turn, f"[[events:{events}]]")
        direct_seconds = time.perf_counter() - started
    finally:
        direct.close()
    async with PaseoClient(home=home) as owner:
        agent = await create(owner, cwd)
        followers = [Subscriber(home, agent) for _ in range(subscribers)]
        for follower in followers:
            await follower.start()
        try:
            started = time.perf_counter()
            await owner.call("agent.send", {"agentId": agent, "text": f"[[events:{events}]]"})
            await asyncio.wait_for(asyncio.gather(*(f.done.wait() for f in followers)), 300)
            daemon_seconds = time.perf_counter() - started
        finally:
            for follower in followers:
                await follower.client.close()
    counts = [follower.entries for follower in followers]
    if any(count != events for count in counts):
        raise RuntimeError(f"subscribers hold {counts} entries, expected {events} each")
    return direct_seconds, daemon_seconds, sum(f.refetched for f in followers)


async def idle_memory(home: Path, cwd: Path, pid: int, agents: int) -> tuple[int, int]:
    daemon = psutil.Process(pid)
    before = daemon.memory_info().rss
    async with PaseoClient(home=home) as client:
        for _ in range(agents):
            await create(client, cwd)
        after = daemon.memory_info().rss
    return before, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument(
        "--model-latency",
        type=float,
        default=0.5,
        help="seconds the program waits per turn in the second turn measurement, as a model "
        "would (real turns take 0.5-4 s)",
    )
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--subscribers", type=int, default=10)
    parser.add_argument("--idle", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paseo-bench-agents-") as raw:
        root = Path(raw)
        cwd = root / "work"
        cwd.mkdir()
        home = root / "home"
        pid = start_daemon(home)
        try:
            # The memory baseline comes first, from a daemon that has served nothing yet.
            before, after = asyncio.run(idle_memory(home, cwd, pid, args.idle))
            bare = asyncio.run(turn_overhead(home, cwd, args.turns, "hello"))
            modelled = asyncio.run(
                turn_overhead(
                    home, cwd, max(5, args.turns // 5), f"[[slow:{args.model_latency}]] hello"
                )
            )
            direct_fan, daemon_fan, refetched = asyncio.run(
                fan_out(home, cwd, args.events, args.subscribers)
            )
        finally:
            stop_daemon(home)
    for label, (direct_s, daemon_s) in (
        ("instant turn", bare),
        (f"turn with {args.model_latency:g} s of model time", modelled),
    ):
        print(
            f"{label}: direct {direct_s * 1000:.1f} ms, daemon {daemon_s * 1000:.1f} ms "
            f"(+{(daemon_s - direct_s) * 1000:.1f} ms), ratio {daemon_s / direct_s:.2f}x"
        )
    ratio = modelled[1] / modelled[0]
    print(f"target: a realistic turn within {TARGET}x: {'met' if ratio <= TARGET else 'MISSED'}")
    per_subscriber = args.events / daemon_fan
    print(
        f"timeline fan-out: {args.events} entries to {args.subscribers} subscribers in "
        f"{daemon_fan:.2f} s: {per_subscriber:,.0f} entries/s per subscriber, "
        f"{per_subscriber * args.subscribers:,.0f} deliveries/s, {refetched} re-fetched after "
        f"gaps (the program alone emits {args.events / direct_fan:,.0f} lines/s)"
    )
    mib = 1024 * 1024
    print(
        f"daemon RSS: {before / mib:.1f} MiB with no agent, {after / mib:.1f} MiB with "
        f"{args.idle} idle agents ({(after - before) / args.idle / 1024:.0f} KiB per agent)"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
