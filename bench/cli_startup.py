"""CLI start-up cost: ``paseo --help``, ``paseo --version`` and ``paseo ls`` against floors.

Prints the median wall time (and the median CPU time of the process) of each over repeated,
interleaved runs, with its ratio to ``python -c pass`` measured in the same run (target: at
most 2x for ``--help``/``--version``). ``paseo ls`` (one page, against a running daemon) is
printed next to its own floor, ``python + raw round trip``: a fresh interpreter that opens a
socket to the same daemon, upgrades it to a WebSocket and makes the calls ``paseo ls`` makes
(``server.hello``, one ``agent.list`` page), with the standard library only and no Paseo code.
``python + websockets connect`` (the same interpreter opening and closing a connection with
websockets' client, which ``paseo ls`` used until issue 36's item 4) is shown too.

``--agents N`` gives the daemon a SQLite home of N closed agents (built as ``bench/scale.py``
builds its homes, at ``nice -n 10``), so ``paseo ls`` is measured at that size; ``--ref REF``
adds ``paseo ls`` run from the ``paseo`` package of a git revision (``main``, a commit) against
the same daemon, the code before a change measured in the same rounds.

The bench compiles the sources' bytecode first: with ``PYTHONDONTWRITEBYTECODE`` set and no
``__pycache__`` every run would compile each module it imports, which no installed program does.

Target (issue 36, item 4): ``paseo ls`` at most 250 ms.

Run: ``.venv/bin/python bench/cli_startup.py`` (``--runs 40``, ``--agents 1000000``,
``--ref main``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

WEBSOCKET_FLOOR = """
import sys
from websockets.sync.client import connect
with connect(sys.argv[1], additional_headers={"Authorization": "Bearer " + sys.argv[2]},
             compression=None, ping_interval=None):
    pass
"""

RAW_ROUND_TRIP = """
import _socket, json, os, sys
host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
sock.connect((host, port))
sock.sendall(
    f"GET /ws HTTP/1.1\\r\\nHost: {host}:{port}\\r\\nUpgrade: websocket\\r\\n"
    "Connection: Upgrade\\r\\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\n"
    f"Sec-WebSocket-Version: 13\\r\\nAuthorization: Bearer {token}\\r\\n\\r\\n".encode()
)
buffer = b""
while b"\\r\\n\\r\\n" not in buffer:
    buffer += sock.recv(65536)
assert buffer.startswith(b"HTTP/1.1 101"), buffer[:40]
buffer = buffer.partition(b"\\r\\n\\r\\n")[2]

def call(request_id, method, params):
    global buffer
    data = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": params}).encode()
    size = len(data)
    if size < 126:
        head = bytes((0x81, 0x80 | size))
    else:
        head = bytes((0x81, 0xFE)) + size.to_bytes(2, "big")
    sock.sendall(head + b"\\0\\0\\0\\0" + data)  # a zero mask: the payload goes as it is
    while True:
        while len(buffer) < 10:
            buffer += sock.recv(1 << 18)
        length, start = buffer[1] & 0x7F, 2
        if length == 126:
            length, start = int.from_bytes(buffer[2:4], "big"), 4
        elif length == 127:
            length, start = int.from_bytes(buffer[2:10], "big"), 10
        while len(buffer) < start + length:
            buffer += sock.recv(1 << 18)
        payload, buffer = buffer[start:start + length], buffer[start + length:]
        message = json.loads(payload)
        if message.get("id") == request_id:
            return message["result"]

call(1, "server.hello", {"clientId": "py-bench", "clientType": "cli", "version": "0"})
call(2, "agent.list", {"includeArchived": False, "labels": {}, "newestFirst": True,
                       "limit": 20, "cursor": None})
sock.sendall(bytes((0x88, 0x82)) + b"\\0\\0\\0\\0" + (1000).to_bytes(2, "big"))
sock.close()
"""
"""The floor of ``paseo ls``: its calls, from a fresh interpreter, with nothing else."""

REF_ENTRY = "import sys; sys.argv[0] = 'paseo'; from paseo.cli import entry; entry()"


def precompile(*roots: Path) -> None:
    """Bytecode for the sources (see the module docstring)."""
    for root in roots:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "-j", "1", str(root)],
            stdout=subprocess.DEVNULL,
            check=False,
            timeout=600,
        )


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run's wall seconds and the process's CPU seconds (user and system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True, cwd="/"
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def start_daemon(paseo: str, env: dict[str, str]) -> str:
    """Start a daemon on ``env``'s home; its WebSocket URL."""
    started = subprocess.run(
        [paseo, "daemon", "start", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    url: str = json.loads(started.stdout)["listen"][0]
    return url


def checkout(ref: str, into: Path) -> Path:
    """The ``paseo`` package of git revision ``ref`` under ``into`` (a directory for
    ``PYTHONPATH``), compiled."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "paseo"],
        capture_output=True,
        check=True,
        timeout=120,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True, timeout=120)
    precompile(into / "paseo")
    return into


BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from scale_homes import sqlite_home
sqlite_home(Path(sys.argv[2]), int(sys.argv[3]))
"""


def build_home(home: Path, agents: int) -> None:
    """A SQLite home of ``agents`` closed agents, built by a child at a lower priority (a
    million take minutes; the machine may be shared), before anything is measured."""
    subprocess.run(
        ["nice", "-n", "10", sys.executable, "-c", BUILD, str(BENCH), str(home), str(agents)],
        check=True,
        timeout=3600,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--agents", type=int, default=0, help="closed agents in the daemon's (SQLite) home"
    )
    parser.add_argument("--ref", help="also run `paseo ls` from this git revision's sources")
    args = parser.parse_args()
    paseo = shutil.which("paseo", path=str(Path(sys.executable).parent)) or "paseo"
    import paseo_hookspecs

    import paseo as package

    precompile(Path(package.__file__ or "").parent, Path(paseo_hookspecs.__file__ or "").parent)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = dict(os.environ, PASEO_HOME=str(root / "never-created"))
        env.pop("PASEO_HOST", None)
        home = root / "daemon"
        if args.agents:
            started = time.perf_counter()
            build_home(home, args.agents)
            print(f"built a home of {args.agents} agents in {time.perf_counter() - started:.0f} s")
        daemon_env = dict(env, PASEO_HOME=str(home), PASEO_LISTEN="127.0.0.1:0")
        url = start_daemon(paseo, daemon_env)
        try:
            token = (home / "local-credential").read_text().strip()
            host, port = url.removeprefix("ws://").removesuffix("/ws").rsplit(":", 1)
            ls = "paseo ls" + (f" ({args.agents} agents)" if args.agents else "")
            cases = {
                "python -c pass": ([sys.executable, "-c", "pass"], env),
                "paseo --help": ([paseo, "--help"], env),
                "paseo --version": ([paseo, "--version"], env),
                "python + ws connect": (
                    [sys.executable, "-c", WEBSOCKET_FLOOR, url, token],
                    daemon_env,
                ),
                "python + raw round trip": (
                    [sys.executable, "-c", RAW_ROUND_TRIP, host, port, token],
                    daemon_env,
                ),
                ls: ([paseo, "ls"], daemon_env),
            }
            if args.ref:
                source = checkout(args.ref, root / "ref")
                ref_env = dict(daemon_env, PYTHONPATH=str(source))
                cases[f"paseo ls ({args.ref})"] = (
                    [sys.executable, "-P", "-c", REF_ENTRY, "ls"],
                    ref_env,
                )
            # Interleave rounds so machine noise hits every case alike.
            walls: dict[str, list[float]] = {name: [] for name in cases}
            cpus: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(args.runs):
                for name, (argv, case_env) in cases.items():
                    wall, cpu = measure(argv, case_env)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
        finally:
            subprocess.run(
                [paseo, "daemon", "stop", "--force"],
                env=daemon_env,
                capture_output=True,
                timeout=120,
                check=False,
            )
        baseline = statistics.median(walls["python -c pass"])
        floor = statistics.median(walls["python + raw round trip"])
        print(f"{'command':<30}{'wall ms':>9}{'vs pass':>9}{'vs floor':>10}{'cpu ms':>9}")
        for name, samples in walls.items():
            median = statistics.median(samples)
            versus = f"{median / floor:>10.2f}" if name.startswith("paseo ls") else " " * 10
            cpu = statistics.median(cpus[name]) * 1000
            print(f"{name:<30}{median * 1000:>9.1f}{median / baseline:>9.2f}{versus}{cpu:>9.1f}")
        print(
            "targets: --help and --version at most 2x python -c pass; paseo ls at most 250 ms "
            "(floor: python + raw round trip)"
        )
        assert not (root / "never-created").exists()
    return 0


if __name__ == "__main__":
    sys.exit(main())
