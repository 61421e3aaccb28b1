"""The three sides ``bench/concurrency.py`` compares, each running N real Claude Code agents.

* :class:`OursSide`: this daemon (``python -m paseo daemon start``), driven over its JSON-RPC
  wire; three client processes subscribe to every agent's stream.
* :class:`TsSide`: the TypeScript daemon (``node --import tsx src/server/index.ts`` from an
  exported tree of the mirrored repository), driven over its wire; three ``cli`` clients get
  every ``agent_stream`` push (it broadcasts them to every non-mobile session).
* :class:`DirectSide`: the same programs with the provider's argv, driven over their own pipes
  by this process: what the daemons' latency and wall time are measured against.

A side's :meth:`turn` sends one prompt to each of its agents at once and returns when every
follower has seen every turn end: its receipts per follower, the daemon's CPU seconds (its own
process only, ``psutil`` without children) and its peak RSS over the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from websockets.sync.client import connect as ws_connect

HERE = Path(__file__).resolve().parent
TURN_TIMEOUT = 600.0
FOLLOWERS = 3

Receipts = dict[str, list[tuple[int, float]]]
"""Per agent, (characters of its reply received so far, ``time.monotonic()``)."""


@dataclass
class TurnResult:
    wall: float
    followers: list[Receipts]
    cpu: float | None = None
    peak_rss: int | None = None
    baseline_rss: int | None = None
    ended: list[bool] = field(default_factory=list)


class _Sampler:
    """Peak RSS of one process (not its children) while a turn runs."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(psutil.Error):
                self.peak = max(self.peak, self.process.memory_info().rss)

    def __enter__(self) -> _Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


class _Followers:
    """Three client processes (:mod:`concurrency_procs` ``client``) following every agent."""

    def __init__(self, kind: str, address: str, agents: list[str], root: Path) -> None:
        self.outs = [root / f"follower-{uuid.uuid4().hex[:8]}.json" for _ in range(FOLLOWERS)]
        self.procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(HERE / "concurrency_procs.py"),
                    "client",
                    kind,
                    address,
                    ",".join(agents),
                    str(out),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for out in self.outs
        ]
        for proc in self.procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a {kind} follower did not start")

    def wait(self) -> tuple[list[Receipts], list[bool], float]:
        """What each follower received, whether it saw every turn end, and when the last
        one saw its last."""
        for proc in self.procs:
            assert proc.stdout is not None
            proc.stdout.readline()  # "done", or end of file
        for proc in self.procs:
            proc.wait(30)
        results = [json.loads(out.read_text()) for out in self.outs]
        for out in self.outs:
            out.unlink()
        last = max(r["ended_at"] for r in results)
        return [r["received"] for r in results], [r["ended"] for r in results], last

    def kill(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# -- ours ---------------------------------------------------------------------------------------


class OursSide:
    name = "ours"

    def __init__(self, daemon: Any, root: Path, cwd: Path) -> None:
        """``daemon``: a ``bench/agents_real.py`` ``Daemon`` whose provider ``claude`` runs the
        pinned Claude Code."""
        self.daemon = daemon
        self.root = root
        self.cwd = cwd
        self.pid: int = daemon.pid
        self.agents: list[str] = []

    async def setup(self, count: int, warm: str) -> None:
        async with self.daemon.client() as client:

            async def one(index: int) -> str:
                params = {
                    "provider": "claude",
                    "cwd": str(self.cwd),
                    "title": f"bench {index}",
                    "initialPrompt": warm,
                }
                agent = str((await client.call("agent.create", params))["agent"]["id"])
                await _wait_idle(client, agent)
                return agent

            self.agents = list(await asyncio.gather(*(one(i) for i in range(count))))

    async def turn(self, prompts: list[str]) -> TurnResult:
        followers = _Followers("ours", str(self.daemon.home), self.agents, self.root)
        try:
            async with self.daemon.client() as client:
                baseline = psutil.Process(self.pid).memory_info().rss
                with _Sampler(self.pid) as sampler:
                    cpu = cpu_seconds(self.pid)
                    started = time.monotonic()
                    await asyncio.gather(
                        *(
                            client.call("agent.send", {"agentId": agent, "text": prompt})
                            for agent, prompt in zip(self.agents, prompts, strict=True)
                        )
                    )
                    receipts, ended, last = await asyncio.to_thread(followers.wait)
                    wall = last - started
                    cpu = cpu_seconds(self.pid) - cpu
                for agent in self.agents:
                    await _wait_idle(client, agent)
        finally:
            followers.kill()
        return TurnResult(wall, receipts, cpu, sampler.peak, baseline, ended)

    async def teardown(self) -> None:
        async with self.daemon.client() as client:
            for agent in self.agents:
                await client.call("agent.stop", {"agentId": agent})
                await client.call("agent.delete", {"agentId": agent})
        self.agents = []


async def _wait_idle(client: Any, agent: str) -> None:
    result = await client.call(
        "agent.wait", {"agentId": agent, "timeout": TURN_TIMEOUT}, timeout=TURN_TIMEOUT + 30
    )
    if result["outcome"] != "idle":
        raise RuntimeError(f"agent {agent[:8]} ended {result['outcome']}: {result.get('error')}")


# -- the TypeScript daemon ----------------------------------------------------------------------


class _TsControl:
    """A plain TypeScript-wire client (requests and their replies), for setup and prompts."""

    def __init__(self, address: str) -> None:
        # No keepalive: a daemon busy creating 30 agents on a loaded machine may answer a ping
        # late, and this connection only carries requests.
        self.ws = ws_connect(
            f"ws://{address}/ws", max_size=None, open_timeout=30, ping_interval=None
        )
        self.ids = itertools.count(1)
        self.replies: dict[str, dict[str, Any]] = {}
        self.send(
            {
                "type": "hello",
                "clientId": f"cid_bench_control_{os.getpid()}",
                # Not a follower: a mobile session gets no agent_stream pushes (it focuses no
                # agent), so the TypeScript daemon streams to the three followers only.
                "clientType": "mobile",
                "protocolVersion": 1,
                "capabilities": {"reasoning_merge_enum": True},
                "appVersion": "0.1.65-beta.5",
            }
        )

    def send(self, frame: dict[str, Any]) -> None:
        self.ws.send(json.dumps(frame))

    def request(self, kind: str, **fields: Any) -> str:
        request_id = f"req-{next(self.ids)}"
        self.send({"type": "session", "message": {"type": kind, "requestId": request_id, **fields}})
        return request_id

    def reply(self, request_id: str, timeout: float = TURN_TIMEOUT) -> dict[str, Any]:
        """The reply to ``request_id`` (replies to other requests read meanwhile are kept)."""
        deadline = time.monotonic() + timeout
        while request_id not in self.replies:
            raw = self.ws.recv(timeout=max(0.1, deadline - time.monotonic()))
            if isinstance(raw, bytes) or '"requestId"' not in raw:
                continue
            message = json.loads(raw).get("message") or {}
            payload = message.get("payload") or {}
            if "requestId" in payload and message.get("type") != "agent_stream":
                self.replies[str(payload["requestId"])] = message
        message = self.replies.pop(request_id)
        payload = message.get("payload") or {}
        if message["type"] == "rpc_error":
            raise RuntimeError(f"the TypeScript daemon refused: {payload}")
        if message["type"] == "status" and payload.get("status") == "agent_create_failed":
            raise RuntimeError(f"the TypeScript daemon could not create: {payload}")
        return dict(payload)

    def close(self) -> None:
        self.ws.close()


class TsSide:
    name = "ts"

    def __init__(self, source: Path, root: Path, cwd: Path, env: dict[str, str]) -> None:
        """``source``: the exported TypeScript tree (its ``node_modules`` installed);
        ``env``: the Claude Code environment (the daemon passes it to the programs)."""
        self.root = root
        self.cwd = cwd
        self.agents: list[str] = []
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.address = f"127.0.0.1:{port}"
        home = root / "ts-paseo-home"
        home.mkdir()
        bin_dir = HERE.parent / "tests" / "agents" / "node_modules" / ".bin"
        full_env = {
            **env,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PASEO_HOME": str(home),
            "PASEO_LISTEN": self.address,
        }
        self.log = (root / "ts-daemon.log").open("wb")
        self.proc = subprocess.Popen(
            ["node", "--import", "tsx", "src/server/index.ts", "--no-relay", "--no-mcp"],
            cwd=source / "packages" / "server",
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pid = self.proc.pid
        deadline = time.monotonic() + 180
        while True:
            try:
                self.control = _TsControl(self.address)
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the TypeScript daemon did not start: {self.log.name}"
                    ) from None
                time.sleep(0.5)

    def _create(self, count: int, warm: str) -> list[str]:
        control = self.control
        pending = [
            control.request(
                "create_agent_request",
                config={
                    "provider": "claude",
                    "cwd": str(self.cwd),
                    "modeId": "default",
                    "title": f"bench {index}",
                },
                initialPrompt=warm,
            )
            for index in range(count)
        ]
        agents = [str(control.reply(r)["agent"]["id"]) for r in pending]
        self._wait_finished(agents)
        return agents

    def _wait_finished(self, agents: list[str]) -> None:
        waits = [
            self.control.request(
                "wait_for_finish_request", agentId=agent, timeoutMs=int(TURN_TIMEOUT * 1000)
            )
            for agent in agents
        ]
        for request_id in waits:
            self.control.reply(request_id)

    async def setup(self, count: int, warm: str) -> None:
        self.agents = await asyncio.to_thread(self._create, count, warm)

    def _send(self, prompts: list[str]) -> None:
        pending = [
            self.control.request("send_agent_message_request", agentId=agent, text=prompt)
            for agent, prompt in zip(self.agents, prompts, strict=True)
        ]
        for request_id in pending:
            self.control.reply(request_id)

    async def turn(self, prompts: list[str]) -> TurnResult:
        followers = _Followers("ts", self.address, self.agents, self.root)
        try:
            baseline = psutil.Process(self.pid).memory_info().rss
            with _Sampler(self.pid) as sampler:
                cpu = cpu_seconds(self.pid)
                started = time.monotonic()
                await asyncio.to_thread(self._send, prompts)
                receipts, ended, last = await asyncio.to_thread(followers.wait)
                wall = last - started
                cpu = cpu_seconds(self.pid) - cpu
            await asyncio.to_thread(self._wait_finished, self.agents)
        finally:
            followers.kill()
        return TurnResult(wall, receipts, cpu, sampler.peak, baseline, ended)

    async def teardown(self) -> None:
        def delete() -> None:
            for agent in self.agents:
                self.control.reply(self.control.request("delete_agent_request", agentId=agent))

        await asyncio.to_thread(delete)
        self.agents = []

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.control.close()
        _kill_group(self.proc.pid)
        self.proc.wait(30)
        self.log.close()


# -- direct -------------------------------------------------------------------------------------


class _DirectAgent:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    async def _until(self, kind: bytes, receipts: list[tuple[int, float]] | None) -> None:
        assert self.proc.stdout is not None
        chars = 0
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), TURN_TIMEOUT)
            if not line:
                raise RuntimeError("a direct claude ended its output")
            if receipts is not None and b'"text_delta"' in line:
                now = time.monotonic()
                event = json.loads(line).get("event") or {}
                text = (event.get("delta") or {}).get("text") or ""
                if text:
                    chars += len(text)
                    receipts.append((chars, now))
            elif kind in line and json.loads(line).get("type") == kind.decode():
                return

    async def initialize(self) -> None:
        self._write(
            {"type": "control_request", "request_id": "init", "request": {"subtype": "initialize"}}
        )
        await self._until(b"control_response", None)

    async def turn(self, text: str, receipts: list[tuple[int, float]] | None) -> None:
        self._write(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "",
            }
        )
        await self._until(b"result", receipts)


class DirectSide:
    name = "direct"

    def __init__(self, root: Path, cwd: Path, env: dict[str, str]) -> None:
        self.root = root
        self.cwd = cwd
        self.env = env
        self.agents: list[_DirectAgent] = []
        self.names: list[str] = []

    async def setup(self, count: int, warm: str) -> None:
        from helpers.agents_env import BIN_DIR
        from paseo_claude.provider import ClaudeOptions, ClaudeProvider
        from paseo_hookspecs.interfaces.agent import SessionConfig

        provider = ClaudeProvider(options=ClaudeOptions(command=(str(BIN_DIR / "claude"),)))

        async def one(index: int) -> _DirectAgent:
            spec = provider.launch_spec(SessionConfig(agentId=str(uuid.uuid4()), cwd=str(self.cwd)))
            with (self.root / f"direct-{index}.err").open("ab") as stderr:
                proc = await asyncio.create_subprocess_exec(
                    *spec.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    env=self.env,
                    cwd=self.cwd,
                    start_new_session=True,
                    limit=16 * 1024 * 1024,
                )
            agent = _DirectAgent(proc)
            await agent.initialize()
            await agent.turn(warm, None)
            return agent

        self.agents = list(await asyncio.gather(*(one(i) for i in range(count))))
        self.names = [f"direct-{i}" for i in range(count)]

    async def turn(self, prompts: list[str]) -> TurnResult:
        receipts: Receipts = {name: [] for name in self.names}
        started = time.monotonic()
        await asyncio.gather(
            *(
                agent.turn(prompt, receipts[name])
                for agent, name, prompt in zip(self.agents, self.names, prompts, strict=True)
            )
        )
        return TurnResult(time.monotonic() - started, [receipts], ended=[True])

    async def teardown(self) -> None:
        for agent in self.agents:
            _kill_group(agent.proc.pid)
            await agent.proc.wait()
        self.agents = []
        self.names = []

    @property
    def ids(self) -> list[str]:
        return self.names
