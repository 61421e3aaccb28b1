"""The daemon's own cost of one instant Pi turn: CPU seconds and system calls per turn.

On a 2-core machine the daemon's CPU during a turn competes with the agent program and the
model, so it shows up in the turn's wall time (``bench/agents_real.py``). This bench drives
``--turns`` instant Pi turns through the daemon (``agent.send`` + ``agent.wait`` over the
WebSocket, each turn waiting for the agent record to settle as ``agents_real.py`` does),
interleaved with the same turns driven directly over Pi's pipes, and prints:

* CPU per turn (run time of all threads, from ``/proc``) of the daemon process (in all, and
  from the send to the turn's answer), of Pi beside the daemon and of Pi driven directly;
  the daemon's CPU as a ratio of Pi's own CPU per turn (the baseline, measured in the same
  run), and the wall-time ratio daemon / direct.
* With ``--strace`` (needs ``strace``), the daemon's system calls per turn by name, counted by
  ``strace -f -c`` attached to the daemon for another ``--turns`` turns (tracing slows the
  daemon, so CPU and wall figures come from the untraced turns), and with ``--trace FILE`` the
  sequence of one turn (``strace -f -tt -T``) written to FILE.

Run: ``.venv/bin/python bench/turn_syscalls.py --turns 21 --strace --trace /tmp/turn.trace``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from agents_real import TURN_TIMEOUT, Daemon, create, fake_model_process, wait_idle  # noqa: E402
from direct_programs import DirectPi  # noqa: E402
from e2e.pi.env import pi_env  # noqa: E402
from helpers.agents_env import BIN_DIR  # noqa: E402

from paseo.client import PaseoClient  # noqa: E402
from paseo.testing.fake_model import RefusingProxy  # noqa: E402

PROMPT = "[[reply:done]]"
STRACE_ATTACH_TIMEOUT = 30.0


def cpu_seconds(process: psutil.Process) -> float:
    """CPU seconds the process's threads have run, to the nanosecond (``/proc/.../schedstat``:
    ``cpu_times`` counts in clock ticks, 10 ms here, coarser than a turn)."""
    total = 0
    for task in Path(f"/proc/{process.pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
    return total / 1e9


class Traced:
    """``strace`` attached to every thread of a process until :meth:`stop`."""

    def __init__(self, pid: int, args: list[str], output: Path) -> None:
        self.output = output
        self.process = subprocess.Popen(
            ["strace", "-f", *args, "-o", str(output), "-p", str(pid)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        # strace says "Process N attached" on stderr once it traces the process.
        assert self.process.stderr is not None
        deadline = time.monotonic() + STRACE_ATTACH_TIMEOUT
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                raise RuntimeError(f"strace could not attach to {pid}")
            if "attached" in line:
                return
        raise RuntimeError(f"strace did not attach to {pid} within {STRACE_ATTACH_TIMEOUT} s")

    def stop(self) -> str:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return self.output.read_text()


def parse_counts(summary: str) -> dict[str, int]:
    """Calls per system call name from ``strace -c`` output."""
    counts: dict[str, int] = {}
    for line in summary.splitlines():
        # % time  seconds  usecs/call  calls  [errors]  syscall
        match = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
        if match and match.group(2) != "total":
            counts[match.group(2)] = int(match.group(1))
    return counts


class Bench:
    def __init__(self, daemon: Daemon, direct: DirectPi, client: PaseoClient, agent: str) -> None:
        self.daemon = daemon
        self.direct = direct
        self.client = client
        self.agent = agent
        self.daemon_process = psutil.Process(daemon.pid)
        self.settled = asyncio.Event()
        self.index = 0
        self.in_turn_cpu = 0.0
        """Daemon CPU seconds from each send to its turn's answer (the part that competes with
        Pi and the model; the record write and the fsync round follow the answer)."""

    def on_updated(self, _method: str, params: dict[str, Any]) -> None:
        record = params["agent"]
        if record["id"] == self.agent and record.get("lastStatus") == "idle":
            self.settled.set()

    def pi_beside_daemon(self) -> psutil.Process:
        for child in self.daemon_process.children(recursive=True):
            if "pi" in " ".join(child.cmdline()):
                return child
        raise RuntimeError("the daemon's Pi process was not found")

    async def daemon_turn(self) -> float:
        self.index += 1
        self.settled.clear()
        cpu_before = cpu_seconds(self.daemon_process)
        started = time.perf_counter()
        await self.client.call(
            "agent.send", {"agentId": self.agent, "text": f"{PROMPT} turn {self.index}"}
        )
        await wait_idle(self.client, self.agent)
        seconds = time.perf_counter() - started
        self.in_turn_cpu += cpu_seconds(self.daemon_process) - cpu_before
        await asyncio.wait_for(self.settled.wait(), TURN_TIMEOUT)
        return seconds

    async def direct_turn(self) -> float:
        self.index += 1
        started = time.perf_counter()
        await asyncio.to_thread(self.direct.turn, f"{PROMPT} turn {self.index}")
        return time.perf_counter() - started

    async def measure(self, turns: int) -> dict[str, float]:
        pi_daemon = self.pi_beside_daemon()
        pi_direct = psutil.Process(self.direct.process.proc.pid)
        walls: dict[str, list[float]] = {"daemon": [], "direct": []}
        cpu = {"daemon": 0.0, "pi_daemon": 0.0, "pi_direct": 0.0}
        self.in_turn_cpu = 0.0

        async def timed(
            kind: str, turn: Callable[[], Awaitable[float]], watched: dict[str, psutil.Process]
        ) -> None:
            before = {name: cpu_seconds(process) for name, process in watched.items()}
            walls[kind].append(await turn())
            for name, process in watched.items():
                cpu[name] += cpu_seconds(process) - before[name]

        for index in range(turns):
            daemon_side = timed(
                "daemon",
                self.daemon_turn,
                {"daemon": self.daemon_process, "pi_daemon": pi_daemon},
            )
            direct_side = timed("direct", self.direct_turn, {"pi_direct": pi_direct})
            first, second = (daemon_side, direct_side) if index % 2 else (direct_side, daemon_side)
            await first
            await second
        return {
            "wall_daemon": statistics.median(walls["daemon"]),
            "wall_direct": statistics.median(walls["direct"]),
            **{name: seconds / turns for name, seconds in cpu.items()},
            "daemon_in_turn": self.in_turn_cpu / turns,
        }

    async def count_syscalls(self, turns: int, root: Path) -> dict[str, int]:
        traced = await asyncio.to_thread(Traced, self.daemon.pid, ["-c"], root / "strace-c")
        try:
            for _ in range(turns):
                await self.daemon_turn()
        finally:
            summary = await asyncio.to_thread(traced.stop)
        return parse_counts(summary)

    async def trace_one(self, output: Path) -> None:
        traced = await asyncio.to_thread(Traced, self.daemon.pid, ["-tt", "-T"], output)
        try:
            await self.daemon_turn()
        finally:
            await asyncio.to_thread(traced.stop)


async def run(daemon: Daemon, direct: DirectPi, cwd: Path, args: argparse.Namespace) -> None:
    async with daemon.client() as client:
        agent = await create(client, "pi", cwd, "[[reply:warm]]")
        bench = Bench(daemon, direct, client, agent)
        client.on("agent.updated", bench.on_updated)
        await client.subscribe(["agents"])
        await bench.measure(3)  # warm both sides (imports, caches, the JIT)
        figures = await bench.measure(args.turns)
        print(f"{args.turns} instant Pi turns, interleaved (per turn)")
        ratio = figures["wall_daemon"] / figures["wall_direct"]
        print(
            f"wall (median): direct {figures['wall_direct'] * 1000:.2f} ms, through the daemon "
            f"{figures['wall_daemon'] * 1000:.2f} ms: {ratio:.2f}x"
        )
        print(
            f"CPU: daemon {figures['daemon'] * 1000:.2f} ms (from send to the answer "
            f"{figures['daemon_in_turn'] * 1000:.2f} ms), Pi beside the daemon "
            f"{figures['pi_daemon'] * 1000:.2f} ms, Pi driven directly "
            f"{figures['pi_direct'] * 1000:.2f} ms; daemon / Pi direct = "
            f"{figures['daemon'] / figures['pi_direct']:.2f}"
        )
        if args.strace:
            counts = await bench.count_syscalls(args.turns, Path(args.workdir))
            total = sum(counts.values())
            print(
                f"daemon system calls per turn (strace -f -c, {args.turns} turns): "
                f"{total / args.turns:.1f}"
            )
            for name, calls in sorted(counts.items(), key=lambda item: -item[1]):
                if calls / args.turns >= 0.5:
                    print(f"  {name:<16} {calls / args.turns:6.1f}")
        if args.trace:
            await bench.trace_one(Path(args.trace))
            print(f"one turn's system calls (strace -f -tt -T): {args.trace}")
        await client.call("agent.stop", {"agentId": agent})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=21)
    parser.add_argument("--strace", action="store_true", help="count the daemon's system calls")
    parser.add_argument("--trace", help="write one turn's strace -f -tt -T sequence here")
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    if not (BIN_DIR / "pi").exists():
        print(f"the pinned agent programs are missing: run `npm ci` in {BIN_DIR.parent.parent}")
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="paseo-bench-syscalls-") as raw,
        fake_model_process() as fake_url,
        RefusingProxy() as proxy,
    ):
        root = Path(raw)
        args.workdir = raw
        cwd = root / "work"
        cwd.mkdir()
        env = {**pi_env(fake_url, root / "pi"), **proxy.proxy_env()}
        daemon = Daemon(root, proxy, {"pi": {"command": [str(BIN_DIR / "pi")], "env": env}})
        try:
            direct = DirectPi(env, cwd, root / "pi-direct.err")
            try:
                asyncio.run(run(daemon, direct, cwd, args))
            finally:
                direct.close()
        finally:
            daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
