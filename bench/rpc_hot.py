"""The RPC hot path: a trivial round trip and a notification fan-out, next to bare websockets.

* ``server.ping`` round trip p50/p99 through the real daemon vs a bare ``websockets`` echo
  server (its own process, same client, same frames), rounds interleaved; two floors: the echo
  on plain asyncio and the echo on uvloop (the daemon's own loop). Target: p50 ≤ 1.0x.
* Notification fan-out to 10 clients (a bench-only directory plugin publishes on a stream every
  client subscribed to) vs a bare websockets server sending the same number of frames of the
  same size to as many clients.

Each figure is the median over ``--rounds`` rounds. Run: ``.venv/bin/python bench/rpc_hot.py``
(``--quick`` for fewer samples).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import psutil
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(Path(__file__).resolve().parent))
from daemon import call, make_plugin, open_ws, percentile, start_daemon

PYTHON = sys.executable
PASEO = shutil.which("paseo", path=str(Path(PYTHON).parent)) or "paseo"

FLOOR_SERVER = textwrap.dedent(
    """
    import asyncio, json, sys
    from websockets.asyncio.server import serve

    if sys.argv[1] == "uvloop":
        import uvloop
        uvloop.install()

    clients = set()

    async def handler(ws):
        clients.add(ws)
        try:
            async for message in ws:
                if message.startswith("fan "):
                    # The floor of a fan-out: the same frames, sent to every client.
                    _, count, size = message.split()
                    frame = "x" * int(size)
                    for i in range(int(count)):
                        for peer in list(clients):
                            await peer.send(frame)
                        if i % 50 == 49:
                            await asyncio.sleep(0)
                else:
                    await ws.send(message)
        finally:
            clients.discard(ws)

    async def main():
        async with serve(handler, "127.0.0.1", 0, compression=None, max_size=None) as server:
            print(server.sockets[0].getsockname()[1], flush=True)
            await asyncio.Future()

    asyncio.run(main())
    """
)


PING = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "server.ping", "params": {"data": "x" * 64}}
)
FAN_CLIENTS = 10


async def round_trips(url: str, token: str | None, count: int, rpc: bool) -> list[float]:
    ws = await open_ws(url, token)
    if rpc:
        await call(ws, 0, "server.hello", {"clientId": "bench"})
    samples = []
    answer: str | bytes = ""
    for _ in range(count + count // 10):
        start = time.perf_counter()
        await ws.send(PING)
        answer = await ws.recv()
        samples.append(time.perf_counter() - start)
    await ws.close()
    if rpc and "result" not in json.loads(answer):
        raise SystemExit(f"server.ping was not answered with a result: {answer!r}")
    return samples[count // 10 :]  # drop warm-up


async def fanout(url: str, token: str | None, count: int, rpc: bool) -> float:
    """Frames a second received by ``FAN_CLIENTS`` clients together."""
    sockets = [await open_ws(url, token) for _ in range(FAN_CLIENTS)]
    size = 0
    if rpc:
        for ws in sockets:
            await call(ws, 0, "server.hello", {"clientId": "bench"})
            joined = await call(ws, 1, "bench.join", {})
            if "error" in joined:
                raise SystemExit(f"the bench plugin did not load: {joined['error']}")

    async def drain(ws: ClientConnection) -> int:
        got = 0
        while got < count:
            message = await ws.recv()
            if not rpc:
                got += 1
                continue
            decoded = json.loads(message)
            if decoded.get("method") == "bench.tick":
                got += 1
            elif decoded.get("method") == "server.resync":
                raise SystemExit("a fan-out client fell behind (server.resync)")
        return got

    if not rpc:
        # The same size as the daemon's frames, so both sides write the same bytes.
        size = len(
            '{"jsonrpc":"2.0","method":"bench.tick","params":{"i":100,"stream":"bench","seq":1000}}'
        )
    start = time.perf_counter()
    readers = [asyncio.create_task(drain(ws)) for ws in sockets]
    if rpc:
        request = {"jsonrpc": "2.0", "id": 2, "method": "bench.fanout", "params": {"count": count}}
        await sockets[0].send(json.dumps(request))
    else:
        await sockets[0].send(f"fan {count} {size}")
    received = sum(await asyncio.wait_for(asyncio.gather(*readers), 120))
    elapsed = time.perf_counter() - start
    for ws in sockets:
        await ws.close()
    return received / elapsed


def start_floor(loop_name: str) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [PYTHON, "-c", FLOOR_SERVER, loop_name], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    return server, f"ws://127.0.0.1:{server.stdout.readline().strip()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    pings = 500 if args.quick else 2000
    ticks = 300 if args.quick else 1000
    import uvloop

    # The same client for every server: uvloop, as a fast client makes the servers' cost show.
    uvloop.install()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        env = dict(os.environ, PASEO_HOME=str(home), PASEO_LISTEN="127.0.0.1:0")
        env.pop("PASEO_HOST", None)
        plugin = make_plugin(root)
        (home / "config.json").write_text(
            json.dumps(
                {
                    "pluginsEnabled": True,
                    "plugins": {
                        "bench": {"source": "directory", "path": str(plugin)},
                        # Every ping answered by the method, none by the rate limiter.
                        "websocket": {"settings": {"requestBurst": 10**9}},
                    },
                }
            )
        )
        report = start_daemon(home, env)
        floors = [start_floor("asyncio"), start_floor("uvloop")]
        names = ("daemon", "echo asyncio", "echo uvloop")
        p50: dict[str, list[float]] = {name: [] for name in names}
        p99: dict[str, list[float]] = {name: [] for name in names}
        fan: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        try:
            url = report["listen"][0]
            token = (home / "local-credential").read_text().strip()
            targets = {
                "daemon": (url, token, True),
                "echo asyncio": (floors[0][1], None, False),
                "echo uvloop": (floors[1][1], None, False),
            }
            processes = {
                "daemon": psutil.Process(report["pid"]),
                "echo asyncio": psutil.Process(floors[0][0].pid),
                "echo uvloop": psutil.Process(floors[1][0].pid),
            }
            # Interleaved rounds: machine noise (2 shared cores) hits every server alike.
            for _ in range(rounds):
                for name, (where, credential, rpc) in targets.items():
                    before = processes[name].cpu_times()
                    samples = asyncio.run(round_trips(where, credential, pings, rpc))
                    after = processes[name].cpu_times()
                    used = after.user - before.user + after.system - before.system
                    cpu[name].append(used / (pings + pings // 10))
                    p50[name].append(percentile(samples, 0.5))
                    p99[name].append(percentile(samples, 0.99))
                for name, (where, credential, rpc) in targets.items():
                    fan[name].append(asyncio.run(fanout(where, credential, ticks, rpc)))
        finally:
            subprocess.run(
                [PASEO, "daemon", "stop", "--force"],
                env=env,
                capture_output=True,
                timeout=60,
                check=False,
            )
            for server, _ in floors:
                server.terminate()
                server.wait(timeout=10)

    print(f"medians of {rounds} rounds ({pings} pings, {ticks} ticks x {FAN_CLIENTS} clients each)")
    print(f"{'measure':<34}{'daemon':>10}{'asyncio':>10}{'ratio':>7}{'uvloop':>10}{'ratio':>7}")
    rows = (
        ("round trip p50 (us)", p50, 1e6, False),
        ("round trip p99 (us)", p99, 1e6, False),
        ("server CPU per round trip (us)", cpu, 1e6, False),
        (f"fan-out to {FAN_CLIENTS} (frames/s)", fan, 1, True),
    )
    for label, figures, scale, higher_better in rows:
        line = f"{label:<34}{statistics.median(figures['daemon']) * scale:>10.0f}"
        for floor in ("echo asyncio", "echo uvloop"):
            # The median of each round's own ratio: both sides of it saw the same machine.
            ratios = [
                (theirs / ours if higher_better else ours / theirs)
                for ours, theirs in zip(figures["daemon"], figures[floor], strict=True)
            ]
            line += f"{statistics.median(figures[floor]) * scale:>10.0f}"
            line += f"{statistics.median(ratios):>7.2f}"
        print(line)
    print("ratio: the daemon's cost over the floor's, per round (lower is better; 1.00 = as fast)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
