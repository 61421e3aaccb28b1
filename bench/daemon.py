"""Daemon benchmarks, each printed next to a baseline measured in the same run.

* ``paseo daemon status`` wall time vs ``python -c pass`` (target: at most 2.5x).
* Request round trip (``server.ping``) p50/p99 vs a bare ``websockets`` echo server in its own
  process, same client, same frames (target: within 2x).
* Notification fan-out throughput to 1, 10 and 100 clients (a bench-only directory plugin
  publishes on a stream every client subscribed to).
* ``paseo daemon start`` wall time to ready on an empty home (target: < 0.5 s) vs
  ``python -c pass``.
* Idle RSS of the daemon (target: < 80 MB).

Run: ``.venv/bin/python bench/daemon.py`` (``--quick`` for fewer samples).
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
from typing import Any

import psutil
from websockets.asyncio.client import ClientConnection, connect

PYTHON = sys.executable
PASEO = shutil.which("paseo", path=str(Path(PYTHON).parent)) or "paseo"

ECHO_SERVER = textwrap.dedent(
    """
    import asyncio, sys
    from websockets.asyncio.server import serve

    async def echo(ws):
        async for message in ws:
            await ws.send(message)

    async def main():
        async with serve(echo, "127.0.0.1", 0, compression=None) as server:
            print(server.sockets[0].getsockname()[1], flush=True)
            await asyncio.Future()

    asyncio.run(main())
    """
)

FANOUT_PLUGIN = textwrap.dedent(
    '''
    """Bench-only plugin: publishes N notifications on the ``bench`` stream."""
    import asyncio

    from paseo_hookspecs import hookimpl
    from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
    from pydantic import BaseModel


    class FanoutParams(BaseModel):
        count: int


    async def join(ctx, params):
        ctx.server.register_stream("bench", frozenset({"local"}))
        ctx.session.subscriptions.add("bench")
        return {"ok": True}


    async def fanout(ctx, params):
        for i in range(params.count):
            ctx.server.publish("bench", "bench.tick", {"i": i})
            if i % 50 == 49:
                await asyncio.sleep(0)  # let the writers run, as real publishers do
        return {"ok": True}


    @hookimpl
    def paseo_register_rpc_methods(register):
        register(RpcMethodGroup("bench", [
            RpcMethod("bench.join", join, access=frozenset({"local"})),
            RpcMethod("bench.fanout", fanout, FanoutParams, access=frozenset({"local"})),
        ]))
    '''
)


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def make_plugin(root: Path) -> Path:
    plugin = root / "bench-plugin"
    plugin.mkdir()
    (plugin / "paseo_bench_fanout.py").write_text(FANOUT_PLUGIN)
    (plugin / "pyproject.toml").write_text(
        '[project]\nname = "paseo-bench-fanout"\nversion = "0"\n'
        '[project.entry-points.paseo]\nbench = "paseo_bench_fanout"\n'
    )
    return plugin


def start_daemon(home: Path, env: dict[str, str]) -> dict[str, Any]:
    result = subprocess.run(
        [PASEO, "daemon", "start", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"daemon failed to start:\n{result.stderr}")
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def stop_daemon(env: dict[str, str]) -> None:
    subprocess.run(
        [PASEO, "daemon", "stop", "--force"], env=env, capture_output=True, timeout=60, check=False
    )


async def open_ws(url: str, token: str | None) -> ClientConnection:
    """A bench client connection: no compression, no frame size limit."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return await connect(url, additional_headers=headers, compression=None, max_size=None)


async def call(ws: ClientConnection, request_id: int, method: str, params: Any) -> Any:
    """One JSON-RPC call; notifications met on the way are skipped."""
    await ws.send(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    )
    while True:
        message = json.loads(await ws.recv())
        if message.get("id") == request_id:
            return message


async def round_trips(url: str, token: str | None, count: int, rpc: bool) -> list[float]:
    ws = await open_ws(url, token)
    if rpc:
        await call(ws, 0, "server.hello", {"clientId": "bench"})
    frame = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "server.ping", "params": {"data": "x" * 64}}
    )
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await ws.send(frame)
        await ws.recv()
        samples.append(time.perf_counter() - start)
    await ws.close()
    return samples[count // 10 :]  # drop warm-up


async def fanout(url: str, token: str, clients: int, count: int) -> tuple[float, int]:
    sockets = [await open_ws(url, token) for _ in range(clients)]
    for ws in sockets:
        await call(ws, 0, "server.hello", {"clientId": "bench"})
        joined = await call(ws, 1, "bench.join", {})
        if "error" in joined:
            raise SystemExit(f"the bench plugin did not load: {joined['error']}")
    received = 0
    resyncs = 0

    async def drain(ws: ClientConnection) -> None:
        nonlocal received, resyncs
        got = 0
        while got < count:
            message = json.loads(await ws.recv())
            if message.get("method") == "bench.tick":
                got += 1
                received += 1
            elif "error" in message:
                raise SystemExit(f"bench.fanout failed: {message['error']}")
            elif message.get("method") == "server.resync":
                resyncs += 1
                return

    start = time.perf_counter()
    readers = [asyncio.create_task(drain(ws)) for ws in sockets]
    await sockets[0].send(
        json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "bench.fanout", "params": {"count": count}}
        )
    )
    await asyncio.wait_for(asyncio.gather(*readers), 120)
    elapsed = time.perf_counter() - start
    for ws in sockets:
        await ws.close()
    return received / elapsed, resyncs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    runs = 8 if args.quick else 25
    pings = 500 if args.quick else 3000
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        env = dict(os.environ, PASEO_HOME=str(home), PASEO_LISTEN="127.0.0.1:0")
        env.pop("PASEO_HOST", None)

        # start-to-ready on an empty home, interleaved with the interpreter baseline
        starts, bases = [], []
        for _ in range(5 if args.quick else 10):
            shutil.rmtree(home, ignore_errors=True)
            bases.append(wall([PYTHON, "-c", "pass"], env))
            starts.append(wall([PASEO, "daemon", "start"], env))
            stop_daemon(env)

        home.mkdir(exist_ok=True)
        plugin = make_plugin(root)
        (home / "config.json").write_text(
            json.dumps(
                {
                    "pluginsEnabled": True,
                    "plugins": {"bench": {"source": "directory", "path": str(plugin)}},
                }
            )
        )
        report = start_daemon(home, env)
        try:
            url = report["listen"][0]
            token = (home / "local-credential").read_text().strip()
            time.sleep(0.5)
            rss = psutil.Process(report["pid"]).memory_info().rss / 2**20

            status, python = [], []
            for _ in range(runs):
                python.append(wall([PYTHON, "-c", "pass"], env))
                status.append(wall([PASEO, "daemon", "status"], env))

            echo = subprocess.Popen([PYTHON, "-c", ECHO_SERVER], stdout=subprocess.PIPE, text=True)
            try:
                assert echo.stdout is not None
                echo_url = f"ws://127.0.0.1:{echo.stdout.readline().strip()}"
                rpc_samples = asyncio.run(round_trips(url, token, pings, rpc=True))
                echo_samples = asyncio.run(round_trips(echo_url, None, pings, rpc=False))
            finally:
                echo.terminate()
                echo.wait(timeout=10)

            fan = {
                n: asyncio.run(fanout(url, token, n, 2000 if n == 1 else 500)) for n in (1, 10, 100)
            }
        finally:
            stop_daemon(env)

    base = statistics.median(python)
    print(f"{'measure':<44}{'value':>12}{'baseline':>12}{'ratio':>8}")
    med = statistics.median(status)
    print(
        f"{'paseo daemon status (ms, median)':<44}{med * 1e3:>12.1f}{base * 1e3:>12.1f}"
        f"{med / base:>8.2f}"
    )
    for label, q in (("p50", 0.5), ("p99", 0.99)):
        ours, theirs = percentile(rpc_samples, q), percentile(echo_samples, q)
        print(
            f"{f'round trip {label} (us) vs websockets echo':<44}{ours * 1e6:>12.0f}"
            f"{theirs * 1e6:>12.0f}{ours / theirs:>8.2f}"
        )
    for n, (rate, resyncs) in fan.items():
        note = f" ({resyncs} resync)" if resyncs else ""
        print(f"{f'fan-out to {n} clients (msgs/s)':<44}{rate:>12.0f}{'':>12}{'':>8}{note}")
    start_med, base_start = statistics.median(starts), statistics.median(bases)
    print(
        f"{'paseo daemon start to ready (ms, median)':<44}{start_med * 1e3:>12.1f}"
        f"{base_start * 1e3:>12.1f}{start_med / base_start:>8.2f}"
    )
    print(f"{'idle RSS (MB)':<44}{rss:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
