"""The daemon's own cost of one instant Pi turn: CPU and system calls per turn.

On a 2-core machine the daemon's CPU during a turn competes with the agent program and the
model, so it shows up in the turn's wall time (``bench/agents_real.py``). This bench drives
``--turns`` instant Pi turns through the daemon (``agent.send`` + ``agent.wait`` over the
WebSocket, each turn waiting for the agent record to settle as ``agents_real.py`` does),
interleaved with the same turns driven directly over Pi's pipes and, with ``--baseline DIR``,
through a second daemon running another commit's source tree (the ratio of the two daemons'
CPU is the figure to compare commits by: both run in the same minutes on the same machine).
It prints per side:

* the median wall time per turn and its ratio to the direct turn;
* the daemon's CPU per turn (run time of all its threads, from ``/proc``, to the nanosecond)
  from the send to the turn's answer (the part that competes with Pi and the model) and in
  all (until the agent record is on disk: the record write and the fsync round follow the
  answer), and Pi's CPU beside the daemon and driven directly;
* with ``--strace`` (needs ``strace``), the daemon's system calls per turn by name, counted by
  ``strace -f -c`` attached to it for another ``--turns`` turns (tracing slows the daemon, so
  the other figures come from untraced turns), and with ``--trace FILE`` the sequence of one
  turn (``strace -f -tt -T``) written to ``FILE.<side>``.

Run: ``git archive main paseo plugins hookspecs | tar -x -C /tmp/base`` then
``.venv/bin/python bench/turn_syscalls.py --turns 41 --baseline /tmp/base --strace``.
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


class DaemonSide:
    """One daemon with one Pi agent, driven turn by turn."""

    def __init__(self, name: str, daemon: Daemon) -> None:
        self.name = name
        self.daemon = daemon
        self.process = psutil.Process(daemon.pid)
        self.client = daemon.client()
        self.agent = ""
        self.pi: psutil.Process | None = None
        self.settled = asyncio.Event()
        self.index = 0

    async def start(self, cwd: Path) -> None:
        await self.client.connect()
        self.agent = await create(self.client, "pi", cwd, "[[reply:warm]]")
        self.client.on("agent.updated", self._on_updated)
        await self.client.subscribe(["agents"])
        for child in self.process.children(recursive=True):
            if "pi" in " ".join(child.cmdline()):
                self.pi = child
        if self.pi is None:
            raise RuntimeError(f"the {self.name} daemon's Pi process was not found")

    async def close(self) -> None:
        await self.client.call("agent.stop", {"agentId": self.agent})
        await self.client.close()

    def _on_updated(self, _method: str, params: dict[str, Any]) -> None:
        record = params["agent"]
        if record["id"] == self.agent and record.get("lastStatus") == "idle":
            self.settled.set()

    async def turn(self) -> dict[str, float]:
        """Wall seconds to the answer; daemon CPU to the answer and until the agent record is
        on disk (the record write and the fsync round follow the answer); Pi's CPU."""
        assert self.pi is not None
        self.index += 1
        self.settled.clear()
        cpu_before, pi_before = cpu_seconds(self.process), cpu_seconds(self.pi)
        started = time.perf_counter()
        await self.client.call(
            "agent.send", {"agentId": self.agent, "text": f"{PROMPT} turn {self.index}"}
        )
        await wait_idle(self.client, self.agent)
        wall = time.perf_counter() - started
        in_turn = cpu_seconds(self.process) - cpu_before
        await asyncio.wait_for(self.settled.wait(), TURN_TIMEOUT)
        return {
            "wall": wall,
            "cpu_in_turn": in_turn,
            "cpu": cpu_seconds(self.process) - cpu_before,
            "pi_cpu": cpu_seconds(self.pi) - pi_before,
        }


class DirectSide:
    """The same Pi driven over its own pipes."""

    name = "direct"

    def __init__(self, direct: DirectPi) -> None:
        self.direct = direct
        self.pi = psutil.Process(direct.process.proc.pid)
        self.index = 0

    async def turn(self) -> dict[str, float]:
        self.index += 1
        pi_before = cpu_seconds(self.pi)
        started = time.perf_counter()
        await asyncio.to_thread(self.direct.turn, f"{PROMPT} turn {self.index}")
        return {"wall": time.perf_counter() - started, "pi_cpu": cpu_seconds(self.pi) - pi_before}


async def measure(sides: list[DaemonSide | DirectSide], turns: int) -> dict[str, dict[str, float]]:
    """Per side: the median wall time and the mean CPU figures of ``turns`` turns, the sides
    taking turns in a rotating order."""
    samples: dict[str, list[dict[str, float]]] = {side.name: [] for side in sides}
    for index in range(turns):
        for offset in range(len(sides)):
            side = sides[(index + offset) % len(sides)]
            samples[side.name].append(await side.turn())
    figures: dict[str, dict[str, float]] = {}
    for name, rows in samples.items():
        figures[name] = {key: statistics.fmean(row[key] for row in rows) for key in rows[0]}
        figures[name]["wall"] = statistics.median(row["wall"] for row in rows)
    return figures


async def count_syscalls(side: DaemonSide, turns: int, output: Path) -> dict[str, int]:
    traced = await asyncio.to_thread(Traced, side.daemon.pid, ["-c"], output)
    try:
        for _ in range(turns):
            await side.turn()
    finally:
        summary = await asyncio.to_thread(traced.stop)
    return parse_counts(summary)


async def trace_one(side: DaemonSide, output: Path) -> None:
    traced = await asyncio.to_thread(Traced, side.daemon.pid, ["-tt", "-T"], output)
    try:
        await side.turn()
    finally:
        await asyncio.to_thread(traced.stop)


def report(figures: dict[str, dict[str, float]], turns: int) -> None:
    direct = figures["direct"]
    print(f"{turns} instant Pi turns per side, interleaved; per turn (wall: median; CPU: mean)")
    print(
        f"{'side':<10} {'wall':>9} {'ratio':>6} {'CPU to answer':>14} {'CPU in all':>11} "
        f"{'Pi CPU':>8}"
    )
    print(
        f"{'direct':<10} {direct['wall'] * 1000:>7.2f}ms {1:>5.2f}x {'':>14} {'':>11} "
        f"{direct['pi_cpu'] * 1000:>6.2f}ms"
    )
    for name, row in figures.items():
        if name == "direct":
            continue
        print(
            f"{name:<10} {row['wall'] * 1000:>7.2f}ms {row['wall'] / direct['wall']:>5.2f}x "
            f"{row['cpu_in_turn'] * 1000:>12.2f}ms {row['cpu'] * 1000:>9.2f}ms "
            f"{row['pi_cpu'] * 1000:>6.2f}ms"
        )
    if "baseline" in figures:
        this, base = figures["daemon"], figures["baseline"]
        print(
            f"daemon CPU vs the baseline tree: to the answer "
            f"{this['cpu_in_turn'] / base['cpu_in_turn']:.2f}x, in all "
            f"{this['cpu'] / base['cpu']:.2f}x"
        )


async def run(
    root: Path, daemons: dict[str, Daemon], direct: DirectPi, args: argparse.Namespace
) -> None:
    cwd = root / "work"
    sides: list[DaemonSide | DirectSide] = [DirectSide(direct)]
    for name, daemon in daemons.items():
        side = DaemonSide(name, daemon)
        await side.start(cwd)
        sides.append(side)
    try:
        await measure(sides, 3)  # warm every side (imports, caches, Pi's JIT)
        report(await measure(sides, args.turns), args.turns)
        for side in sides:
            if not isinstance(side, DaemonSide):
                continue
            if args.strace:
                counts = await count_syscalls(side, args.turns, root / f"strace-{side.name}")
                total = sum(counts.values())
                print(
                    f"{side.name} system calls per turn (strace -f -c, {args.turns} turns): "
                    f"{total / args.turns:.1f}: "
                    + ", ".join(
                        f"{name} {calls / args.turns:.1f}"
                        for name, calls in sorted(counts.items(), key=lambda item: -item[1])
                        if calls / args.turns >= 0.5
                    )
                )
            if args.trace:
                output = Path(f"{args.trace}.{side.name}")
                await trace_one(side, output)
                print(f"one {side.name} turn's system calls (strace -f -tt -T): {output}")
    finally:
        for side in sides:
            if isinstance(side, DaemonSide):
                await side.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=21)
    parser.add_argument("--strace", action="store_true", help="count the daemon's system calls")
    parser.add_argument(
        "--trace", help="write one turn's strace -f -tt -T sequence to TRACE.<side>"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a source tree (paseo/, plugins/, hookspecs/) of another commit whose daemon runs "
        "beside this one, e.g. `git archive main paseo plugins hookspecs | tar -x -C DIR`",
    )
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    if args.baseline is not None and not (args.baseline / "paseo" / "__init__.py").is_file():
        parser.error(f"--baseline {args.baseline} holds no paseo/ package")
    if not (BIN_DIR / "pi").exists():
        print(f"the pinned agent programs are missing: run `npm ci` in {BIN_DIR.parent.parent}")
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="paseo-bench-syscalls-") as raw,
        fake_model_process() as fake_url,
        RefusingProxy() as proxy,
    ):
        root = Path(raw)
        (root / "work").mkdir()
        env = {**pi_env(fake_url, root / "pi"), **proxy.proxy_env()}
        providers = {"pi": {"command": [str(BIN_DIR / "pi")], "env": env}}
        daemons: dict[str, Daemon] = {}
        try:
            daemons["daemon"] = Daemon(root / "daemon", proxy, providers)
            if args.baseline is not None:
                daemons["baseline"] = Daemon(
                    root / "baseline", proxy, providers, source=args.baseline.resolve()
                )
            direct = DirectPi(env, root / "work", root / "pi-direct.err")
            try:
                asyncio.run(run(root, daemons, direct, args))
            finally:
                direct.close()
        finally:
            for daemon in daemons.values():
                daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
