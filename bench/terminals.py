"""Terminal cost, each figure next to a baseline measured in the same run.

* **Output throughput**: a program writes ``--bytes`` of base64 text on a terminal while 1 and
  then ``--subscribers`` clients follow its ``terminal:<id>`` stream; prints MB/s per
  subscriber. Baselines: the same program on a bare PTY read by this process (what the kernel
  delivers), and the same bytes fed straight into the screen model (what the emulator alone
  digests; the daemon reads a PTY no faster than its screen model keeps up).
* **Per-terminal memory**: the daemon's RSS with no terminal, then with ``--terminals`` idle
  shells, then after each has filled its scrollback with plain lines, then with lines that
  change colour at every cell (where the scrollback's byte bound, not its line count, holds);
  the increments per terminal.
* **Snapshot with scrollback**: building and encoding the TypeScript app's Snapshot frame of a
  terminal with a full scrollback, against the same frame of its screen alone.

Run: ``.venv/bin/python bench/terminals.py`` (``--bytes``, ``--subscribers``, ``--terminals``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from paseo.client import PaseoClient

END = b"BENCH-END"


def _program(size: int) -> list[str]:
    # Waits for one line of input so every subscriber is in place before the output starts.
    return ["sh", "-c", f"read go; head -c {size} /dev/urandom | base64; echo {END.decode()}"]


def raw_pty_throughput(size: int) -> tuple[float, int]:
    """MB/s of the program's output read straight from a PTY, and its byte count."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        _program(size), stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    os.write(master, b"\n")
    total = 0
    began = time.perf_counter()
    tail = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        total += len(chunk)
        tail = (tail + chunk)[-64:]
    elapsed = time.perf_counter() - began
    os.close(master)
    process.wait()
    assert END in tail
    return total / elapsed / 1e6, total


def screen_model_throughput(size: int) -> float:
    """MB/s of the screen model fed the same kind of text in the PTY's chunk sizes."""
    from paseo.config.resolved import DEFAULT_SCROLLBACK_BYTES, DEFAULT_SCROLLBACK_LINES
    from paseo.terminals.screen import ScreenModel

    data = base64.encodebytes(os.urandom(size)).replace(b"\n", b"\r\n")
    model = ScreenModel(
        80, 24, scrollback=DEFAULT_SCROLLBACK_LINES, scrollback_bytes=DEFAULT_SCROLLBACK_BYTES
    )
    began = time.perf_counter()
    for start in range(0, len(data), 4096):
        model.feed(data[start : start + 4096])
    return len(data) / (time.perf_counter() - began) / 1e6


def start_daemon(home: Path, size: int) -> int:
    home.mkdir(parents=True)
    profiles = [
        {"id": "bench", "name": "Bench", "command": _program(size)[0], "args": _program(size)[1:]},
        {"id": "shell", "name": "Shell", "command": "sh", "args": []},
    ]
    (home / "config.json").write_text(json.dumps({"daemon": {"terminalProfiles": profiles}}))
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
    subprocess.run(
        [sys.executable, "-m", "paseo", "daemon", "stop", "--force"],
        env=dict(os.environ, PASEO_HOME=str(home)),
        capture_output=True,
        timeout=60,
        check=False,
    )


class Follower:
    """One subscriber counting the bytes it receives from the snapshot's offset on."""

    def __init__(self, client: PaseoClient, terminal_id: str) -> None:
        self.client = client
        self.terminal_id = terminal_id
        self.received = 0
        self.dropped = 0
        self.position = 0
        self.tail = b""
        self.done = asyncio.Event()
        client.on("terminal.output", self._output)

    async def subscribe(self) -> None:
        result = await self.client.call("terminal.subscribe", {"terminalId": self.terminal_id})
        self.position = int(result["offset"])

    def _output(self, method: str, params: dict[str, Any]) -> None:
        data = base64.b64decode(params["data"])
        offset = int(params["offset"])
        self.dropped += int(params.get("dropped", 0))
        end = offset + len(data)
        if end <= self.position:
            return
        data = data[max(0, self.position - offset) :]
        self.position = end
        self.received += len(data)
        self.tail = (self.tail + data)[-64:]
        if END in self.tail:
            self.done.set()


async def stream_throughput(home: Path, workspace: Path, subscribers: int) -> tuple[float, int]:
    """MB/s each of ``subscribers`` clients receives while the bench program writes, and the
    most bytes any of them was told were dropped."""
    clients = [PaseoClient(home=home, client_type="sdk") for _ in range(subscribers)]
    for client in clients:
        await client.connect()
    try:
        created = await clients[0].call(
            "terminal.create", {"cwd": str(workspace), "profileId": "bench"}
        )
        terminal_id = created["terminal"]["terminalId"]
        followers = [Follower(client, terminal_id) for client in clients]
        for follower in followers:
            await follower.subscribe()
        began = time.perf_counter()
        await clients[0].call("terminal.input", {"terminalId": terminal_id, "data": "\r"})
        await asyncio.wait_for(asyncio.gather(*(f.done.wait() for f in followers)), 900)
        elapsed = time.perf_counter() - began
        await clients[0].call("terminal.kill", {"terminalId": terminal_id})
        rate = min(f.received for f in followers) / elapsed / 1e6
        return rate, max(f.dropped for f in followers)
    finally:
        for client in clients:
            await client.close()


@dataclass
class Memory:
    empty: int
    idle: int
    full: int
    coloured: int
    subscribed: dict[str, Any]
    """``terminal.subscribe`` of a terminal with a full scrollback."""


async def memory(home: Path, workspace: Path, pid: int, count: int) -> Memory:
    """Daemon RSS with no terminal, with ``count`` idle shells, and with full scrollbacks
    (plain, then coloured)."""
    daemon = psutil.Process(pid)
    async with PaseoClient(home=home, client_type="sdk") as client:
        empty = daemon.memory_info().rss
        ids = []
        for _ in range(count):
            created = await client.call(
                "terminal.create", {"cwd": str(workspace), "profileId": "shell"}
            )
            ids.append(created["terminal"]["terminalId"])
        await _settle(client, ids, bool)
        idle = daemon.memory_info().rss
        for terminal_id in ids:
            # 76-column lines of mixed text, well past the 2,000-line scrollback.
            await client.call(
                "terminal.input",
                {
                    "terminalId": terminal_id,
                    "data": "head -c 200000 /dev/urandom | base64; echo FILLED\r",
                },
            )
        await _settle(client, ids, lambda lines: "FILLED" in lines)
        full = daemon.memory_info().rss
        painted = (
            "python3 -c \"print(*(''.join('\\x1b[3%dm#' % (j % 8) for j in range(76))"
            " for _ in range(3000)), sep='\\n')\"; echo PAINTED\r"
        )
        for terminal_id in ids:
            await client.call("terminal.input", {"terminalId": terminal_id, "data": painted})
        await _settle(client, ids, lambda lines: "PAINTED" in lines)
        coloured = daemon.memory_info().rss
        subscribed = await client.call(
            "terminal.subscribe", {"terminalId": ids[0], "scrollback": True}
        )
        for terminal_id in ids:
            await client.call("terminal.kill", {"terminalId": terminal_id})
    return Memory(empty, idle, full, coloured, subscribed)


def snapshot_cost(subscribed: dict[str, Any]) -> tuple[float, int, float, int, int]:
    """Seconds and bytes of the Snapshot frame with and without the scrollback, and its rows."""
    from paseo_tswire import terminal_grid

    def build(lines: list[str]) -> tuple[float, int]:
        began = time.perf_counter()
        state = terminal_grid.state(
            subscribed["snapshot"],
            columns=subscribed["columns"],
            rows=subscribed["rows"],
            scrollback=lines,
        )
        size = len(terminal_grid.encode(state))
        return time.perf_counter() - began, size

    lines = list(subscribed["scrollback"])
    alone, alone_size = build([])
    full, full_size = build(lines)
    return alone, alone_size, full, full_size, len(lines)


async def _settle(client: PaseoClient, ids: list[str], ready: Any) -> None:
    deadline = time.monotonic() + 900
    for terminal_id in ids:
        while time.monotonic() < deadline:
            captured = await client.call("terminal.capture", {"terminalId": terminal_id})
            if ready([line.strip() for line in captured["lines"]]):
                break
            await asyncio.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1_000_000, help="random bytes, base64ed")
    parser.add_argument("--subscribers", type=int, default=10)
    parser.add_argument("--terminals", type=int, default=10)
    args = parser.parse_args()

    raw, total = raw_pty_throughput(args.bytes)
    model = screen_model_throughput(args.bytes)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        pid = start_daemon(home, args.bytes)
        try:
            one, one_dropped = asyncio.run(stream_throughput(home, workspace, 1))
            many, many_dropped = asyncio.run(stream_throughput(home, workspace, args.subscribers))
            used = asyncio.run(memory(home, workspace, pid, args.terminals))
        finally:
            stop_daemon(home)
    alone, alone_size, full, full_size, kept = snapshot_cost(used.subscribed)

    mib = 1024 * 1024
    print(f"output: {total / 1e6:.2f} MB of base64 text per run")
    print(f"  baseline, bare PTY read:        {raw:8.2f} MB/s")
    print(f"  baseline, screen model alone:   {model:8.2f} MB/s")
    print(f"  daemon → 1 subscriber:          {one:8.2f} MB/s  ({one / model:.2f}x the model)")
    print(
        f"  daemon → {args.subscribers} subscribers:        {many:8.2f} MB/s each"
        f"  ({many / one:.2f}x of 1; {many * args.subscribers:.2f} MB/s delivered)"
    )
    print(f"  bytes dropped (1 / {args.subscribers} subscribers): {one_dropped} / {many_dropped}")
    count = args.terminals
    print(f"memory: daemon RSS {used.empty / mib:.1f} MiB with no terminal")
    print(f"  per idle shell:                 {(used.idle - used.empty) / count / mib:8.2f} MiB")
    print(f"  per shell, full scrollback:     {(used.full - used.empty) / count / mib:8.2f} MiB")
    print(
        f"  per shell, coloured scrollback: {(used.coloured - used.empty) / count / mib:8.2f} MiB"
        f"  ({kept} lines kept of 3,000: the byte bound)"
    )
    print(f"snapshot frame: screen alone {alone * 1e3:.1f} ms, {alone_size / 1024:.0f} KiB")
    print(
        f"  with {kept} scrollback lines:   {full * 1e3:.1f} ms, {full_size / 1024:.0f} KiB"
        f"  ({full / alone:.0f}x the time, {full_size / alone_size:.0f}x the bytes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
