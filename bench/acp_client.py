"""Turn overhead of Paseo's ACP client against a bare JSON-RPC loop and the official Python ACP
SDK (``agent-client-protocol``), on the real ACP programs, measured in the same run.

For each program three clients each keep one live session: **direct** (the baseline: a bare
asyncio loop writing ``session/prompt`` and reading lines until its result), **paseo** (the
``acp``-derived provider's :class:`~paseo_acp.session.AcpSession`, events through a sink, as
in the daemon) and **sdk** (``acp.spawn_agent_process`` with a ``Client`` that collects the
streamed text). Turns (``[[reply:...]]`` answered at once by the fake, which runs in its own
process) are interleaved, rotating which client goes first; medians are compared. The
question it answers: would the SDK lower Paseo's turn overhead (docs/providers.md)?

Needs the pinned programs (``cd tests/agents && npm ci``) and the ``test`` extra.
Run: ``.venv/bin/python bench/acp_client.py`` (``--turns N``, ``--programs copilot,omp,py-acp``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

import acp  # noqa: E402
import psutil  # noqa: E402
from agents_real import fake_model_process  # noqa: E402
from helpers import acp_test_agent  # noqa: E402
from helpers.agents_env import BIN_DIR, copilot_env, omp_env  # noqa: E402
from paseo_acp.copilot import CopilotProvider  # noqa: E402
from paseo_acp.omp import OmpProvider  # noqa: E402
from paseo_acp.provider import AcpProvider  # noqa: E402
from paseo_hookspecs.interfaces.agent import SessionConfig  # noqa: E402

from paseo.testing.fake_model import RefusingProxy  # noqa: E402
from paseo.testing.provider_conformance import RecordingSink, kernel_launcher  # noqa: E402

TURN_TIMEOUT = 120.0
INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
    },
}


def kill_tree(pid: int) -> None:
    """Kill ``pid`` and its descendants: the npm launchers are wrappers around native children
    that keep the pipes open (the SDK's own shutdown stops only the wrapper)."""
    try:
        root = psutil.Process(pid)
        family = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for process in family:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            continue


class Direct:
    """The baseline: the program over stdio with nothing but line reads and a JSON parse."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.argv, self.env, self.cwd = argv, env, cwd
        self.ids = iter(range(1, 10**9))

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            cwd=self.cwd,
            limit=2**24,
        )
        await self.request("initialize", INIT)
        result = await self.request("session/new", {"cwd": str(self.cwd), "mcpServers": []})
        self.session = result["sessionId"]

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        rpc_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.argv[0]} exited")
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if reply.get("id") == rpc_id and "method" not in reply:
                return reply["result"]

    async def turn(self, text: str) -> None:
        prompt = [{"type": "text", "text": text}]
        await self.request("session/prompt", {"sessionId": self.session, "prompt": prompt})

    async def close(self) -> None:
        kill_tree(self.proc.pid)
        await self.proc.wait()


class Paseo:
    """Paseo's ACP client: the provider's session, events to a sink."""

    def __init__(self, provider: AcpProvider, env: dict[str, str], cwd: Path) -> None:
        self.provider, self.env, self.cwd = provider, env, cwd

    async def start(self) -> None:
        self.sink = RecordingSink(self.provider.id)
        config = SessionConfig(
            agentId=f"bench-{uuid.uuid4().hex[:8]}", cwd=str(self.cwd), env=self.env
        )
        self.session = await self.provider.create_session(config, self.sink, kernel_launcher())

    async def turn(self, text: str) -> None:
        start = len(self.sink.events)
        await self.session.prompt(text, message_id=uuid.uuid4().hex)
        await self.sink.wait_index(
            lambda e: e.type in ("turn_completed", "turn_failed", "turn_canceled"),
            after=start,
            within=TURN_TIMEOUT,
            what="the end of the turn",
        )

    async def close(self) -> None:
        await self.session.close()


class _Collector(acp.Client):  # type: ignore[misc]
    """The SDK client side: keeps the streamed text, as a real client would."""

    def __init__(self) -> None:
        self.text: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        if getattr(content, "text", None):
            self.text.append(content.text)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no permission request is expected in a text turn")


class Sdk:
    """The official Python ACP SDK's client connection."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.argv, self.env, self.cwd = argv, env, cwd

    async def start(self) -> None:
        self.context = acp.spawn_agent_process(
            _Collector(), self.argv[0], *self.argv[1:], env=self.env, cwd=self.cwd
        )
        self.conn, self.process = await self.context.__aenter__()
        await self.conn.initialize(protocol_version=1)
        self.session = (await self.conn.new_session(cwd=str(self.cwd), mcp_servers=[])).session_id

    async def turn(self, text: str) -> None:
        await self.conn.prompt(session_id=self.session, prompt=[acp.text_block(text)])

    async def close(self) -> None:
        kill_tree(self.process.pid)
        await self.context.__aexit__(None, None, None)


def programs(
    url: str, proxy: RefusingProxy, root: Path
) -> dict[str, tuple[list[str], dict[str, str], AcpProvider]]:
    proxied = proxy.proxy_env()
    py_env = {
        "PATH": str(Path(sys.executable).parent),
        acp_test_agent.STATE_DIR_VARIABLE: str(root / "py-state"),
    }
    copilot = [str(BIN_DIR / "copilot"), "--acp"]
    omp = [str(BIN_DIR / "omp"), "acp"]
    return {
        "copilot": (
            copilot,
            copilot_env(url, root / "copilot", proxy_env=proxied),
            CopilotProvider(overrides={"command": copilot}),
        ),
        "omp": (
            omp,
            omp_env(url, root / "omp", proxy_env=proxied),
            OmpProvider(overrides={"command": omp}),
        ),
        "py-acp": (
            acp_test_agent.command(),
            py_env,
            AcpProvider().derive("py-acp", "py", {"command": acp_test_agent.command()}),  # type: ignore[dict-item]
        ),
    }


async def measure(
    name: str, spec: tuple[list[str], dict[str, str], AcpProvider], turns: int, root: Path
) -> dict[str, float]:
    argv, env, provider = spec
    clients: dict[str, Any] = {}
    for side, make in (
        ("direct", lambda cwd: Direct(argv, env, cwd)),
        ("paseo", lambda cwd: Paseo(provider, env, cwd)),
        ("sdk", lambda cwd: Sdk(argv, env, cwd)),
    ):
        cwd = root / f"{name}-{side}"
        cwd.mkdir(parents=True)
        clients[side] = make(cwd)
        await asyncio.wait_for(clients[side].start(), TURN_TIMEOUT)
    times: dict[str, list[float]] = {side: [] for side in clients}
    order = list(clients)
    try:
        for n in range(turns + 1):
            for side in order[n % 3 :] + order[: n % 3]:
                started = time.perf_counter()
                await asyncio.wait_for(
                    clients[side].turn(f"bench {n} [[reply:instant reply]]"), TURN_TIMEOUT
                )
                if n:  # the first turn of each warms caches up
                    times[side].append(time.perf_counter() - started)
    finally:
        for client in clients.values():
            await client.close()
    return {side: statistics.median(values) * 1000 for side, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=15)
    parser.add_argument("--programs", default="copilot,omp,py-acp")
    args = parser.parse_args()
    with (
        fake_model_process() as url,
        RefusingProxy() as proxy,
        tempfile.TemporaryDirectory() as tmp,
    ):
        specs = programs(url, proxy, Path(tmp))
        header = f"{'program':<8} {'direct ms':>10} {'paseo ms':>9} {'sdk ms':>7}"
        print(f"{header} {'paseo/direct':>13} {'sdk/direct':>11}")
        for name in args.programs.split(","):
            medians = asyncio.run(measure(name, specs[name], args.turns, Path(tmp)))
            direct = medians["direct"]
            print(
                f"{name:<8} {direct:>10.1f} {medians['paseo']:>9.1f} {medians['sdk']:>7.1f} "
                f"{medians['paseo'] / direct:>12.2f}x {medians['sdk'] / direct:>10.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
