"""The agent manager's cost with the real agent programs, each figure next to a baseline
measured in the same run, against the scripted fake model server (loopback only).

* **Turn overhead**: one prompt → reply turn through the daemon (``agent.send`` + ``agent.wait``
  over the WebSocket; the provider plugin maps the program's protocol, the manager numbers,
  persists and publishes every event) against the same program with the same argv and
  environment driven directly over its stdin/stdout (Claude Code's stream-json, Codex's
  app-server JSON-RPC). Turns are interleaved (alternating which goes first) and medians
  compared; target: every row at most 1.25x. Measured for an instant reply and for a reply the
  fake streams over ``--model-time`` seconds (real model turns take 0.5-4 s). The fake model
  server runs in its own process and both sides get the same environment (including the
  refusing proxy), so the only difference is the daemon.
* **Timeline fan-out**: one real Claude Code agent streams a ``[[long:N]]`` reply while
  ``--subscribers`` clients follow its stream; prints timeline entries/s per subscriber and in
  total (text deltas are coalesced into entries by the manager), the text characters/s each
  subscriber receives, and the direct program's own output rate for the same prompt.
* **Idle memory**: the daemon's RSS with no agent, then with ``--idle`` idle agents (the Python
  ACP test agent, the cheapest real program; each keeps a live process).

Needs the pinned programs (``cd tests/agents && npm ci``) and the ``test`` extra.
Run: ``.venv/bin/python bench/agents_real.py`` (``--turns``, ``--model-time``, ``--chunks``,
``--subscribers``, ``--idle``, ``--no-codex``, ``--programs claude,codex,pi,opencode,copilot,omp``,
``--source DIR`` to measure another commit's exported tree).
The direct baselines of Pi, OpenCode and the ACP programs are in ``bench/direct_programs.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from direct_programs import DirectCopilot, DirectOmp, DirectOpenCode, DirectPi  # noqa: E402
from e2e.opencode.env import opencode_env  # noqa: E402
from e2e.pi.env import pi_env  # noqa: E402
from helpers import acp_test_agent  # noqa: E402
from helpers.agents_env import (  # noqa: E402
    BIN_DIR,
    AgentProcess,
    claude_code_env,
    codex_env,
    copilot_env,
    omp_env,
)
from paseo_claude.provider import ClaudeOptions, ClaudeProvider  # noqa: E402
from paseo_hookspecs.interfaces.agent import SessionConfig  # noqa: E402

from paseo.client import PaseoClient  # noqa: E402
from paseo.testing.fake_model import RefusingProxy  # noqa: E402

TARGET = 1.25
TURN_TIMEOUT = 120.0
INSTANT = "instant reply"


@contextlib.contextmanager
def fake_model_process() -> Iterator[str]:
    """The fake model server in its own process; yields its base URL.

    In a thread of this process it would compete for the GIL with the client driving the
    daemon, a cost the direct baseline (whose reader thread mostly sleeps) would not pay.
    """
    server = subprocess.Popen(
        [sys.executable, "-m", "paseo.testing.fake_model"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the fake model server did not start (said {url!r})")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def fsync_cost(directory: Path, samples: int = 20) -> float:
    """Milliseconds for a small durable write (write, fsync, fsync the directory) here."""
    path = directory / "fsync-probe"
    started = time.perf_counter()
    for _ in range(samples):
        with path.open("wb") as handle:
            handle.write(b"x" * 512)
            handle.flush()
            os.fsync(handle.fileno())
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    path.unlink()
    return (time.perf_counter() - started) / samples * 1000


# -- the direct baselines ---------------------------------------------------------------------


class DirectClaude:
    """Claude Code with the daemon's argv (from the provider), driven over stream-json."""

    def __init__(self, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        options = ClaudeOptions(command=(str(BIN_DIR / "claude"),), env=env)
        provider = ClaudeProvider(options=options)
        spec = provider.launch_spec(SessionConfig(agentId=str(uuid.uuid4()), cwd=str(cwd)))
        self.process = AgentProcess(spec.argv, env=env, cwd=cwd, stderr_path=stderr)
        self.reply = ""
        self.process.send(
            {"type": "control_request", "request_id": "init", "request": {"subtype": "initialize"}}
        )
        self.process.read_until(
            lambda m: m.get("type") == "control_response", timeout=TURN_TIMEOUT, what="initialize"
        )

    def turn(self, text: str) -> int:
        """One prompt until its ``result``; returns how many lines the program wrote."""
        seen = len(self.process.messages)
        self.process.send(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "",
            }
        )
        result = self.process.read_until(
            lambda m: m.get("type") == "result", timeout=TURN_TIMEOUT, what="the result"
        )
        if result.get("is_error"):
            raise RuntimeError(f"direct claude turn failed: {result.get('result')}")
        self.reply = str(result.get("result") or "")
        return len(self.process.messages) - seen

    def close(self) -> None:
        self.process.close()


class DirectCodex:
    """``codex app-server`` driven over its JSON-RPC, with the provider's default mode."""

    def __init__(self, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self.process = AgentProcess(
            [str(BIN_DIR / "codex"), "app-server"], env=env, cwd=cwd, stderr_path=stderr
        )
        self.ids = iter(range(1, 1_000_000))
        self.request("initialize", {"clientInfo": {"name": "paseo-bench", "version": "0"}})
        self.process.send({"method": "initialized"})
        started = self.request(
            "thread/start",
            {"cwd": str(cwd), "approvalPolicy": "on-request", "sandbox": "workspace-write"},
        )
        self.thread = started["thread"]["id"]

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self.ids)
        self.process.send({"id": request_id, "method": method, "params": params})
        answer = self.process.read_until(
            lambda m: m.get("id") == request_id and "method" not in m,
            timeout=TURN_TIMEOUT,
            what=method,
        )
        if "error" in answer:
            raise RuntimeError(f"codex {method}: {answer['error']}")
        result: dict[str, Any] = answer["result"]
        return result

    def turn(self, text: str) -> int:
        seen = len(self.process.messages)
        self.request(
            "turn/start", {"threadId": self.thread, "input": [{"type": "text", "text": text}]}
        )
        done = self.process.read_until(
            lambda m: m.get("method") == "turn/completed", timeout=TURN_TIMEOUT, what="turn end"
        )
        if done["params"]["turn"]["status"] != "completed":
            raise RuntimeError(f"direct codex turn ended {done['params']['turn']['status']}")
        return len(self.process.messages) - seen

    def close(self) -> None:
        self.process.close()


# -- the daemon ---------------------------------------------------------------------------------


class Daemon:
    """A daemon with a from-scratch environment (plus the refusing proxy's variables) whose
    providers get their programs' hermetic environments from config.json."""

    def __init__(
        self,
        root: Path,
        proxy: RefusingProxy,
        providers: dict[str, Any],
        *,
        source: Path | None = None,
    ) -> None:
        """``source``: run the daemon from this tree's ``paseo``, ``plugins`` and
        ``hookspecs`` (another commit's, exported) instead of the installed ones."""
        self.home = root / "paseo-home"
        self.home.mkdir(parents=True)
        (root / "daemon-home").mkdir()
        # No Paseo MCP server is injected: the direct programs run without one, and an injected
        # server is work the program does (connecting, listing tools, sending their schemas to
        # the model), not the daemon's overhead.
        config = {
            "agents": {"providers": providers},
            "daemon": {"mcp": {"injectIntoAgents": False}},
        }
        (self.home / "config.json").write_text(json.dumps(config))
        self.env = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}
        self.env.update(
            {
                "HOME": str(root / "daemon-home"),
                "PASEO_HOME": str(self.home),
                "PASEO_LISTEN": "127.0.0.1:0",
                **proxy.proxy_env(),
            }
        )
        if source is not None:
            # Ahead of the editable installs, whose finder comes after the path.
            trees = (source, source / "plugins", source / "hookspecs")
            self.env["PYTHONPATH"] = os.pathsep.join(str(tree) for tree in trees)
        result = subprocess.run(
            [sys.executable, "-m", "paseo", "daemon", "start", "-o", "json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=90,
            check=True,
        )
        self.pid = int(json.loads(result.stdout)["pid"])

    def stop(self) -> None:
        result = subprocess.run(
            [sys.executable, "-m", "paseo", "daemon", "stop", "--timeout", "30"],
            env=self.env,
            capture_output=True,
            timeout=90,
            check=False,
        )
        if result.returncode != 0:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)

    def client(self) -> PaseoClient:
        return PaseoClient(home=self.home, request_timeout=TURN_TIMEOUT)


async def wait_idle(client: PaseoClient, agent: str) -> None:
    result = await client.call(
        "agent.wait", {"agentId": agent, "timeout": TURN_TIMEOUT}, timeout=TURN_TIMEOUT + 30
    )
    if result["outcome"] != "idle":
        raise RuntimeError(f"agent {agent[:8]} ended {result['outcome']}: {result.get('error')}")


async def create(client: PaseoClient, provider: str, cwd: Path, prompt: str | None) -> str:
    # Titled: an untitled agent's first prompt starts an internal agent generating its title,
    # a second program whose start-up would run beside the measured turns.
    params: dict[str, Any] = {"provider": provider, "cwd": str(cwd), "title": f"bench {provider}"}
    if prompt:
        params["initialPrompt"] = prompt
    agent = str((await client.call("agent.create", params))["agent"]["id"])
    await wait_idle(client, agent)
    return agent


# -- measurements -------------------------------------------------------------------------------


async def turn_overhead(
    daemon: Daemon,
    *,
    provider: str,
    direct: DirectClaude | DirectCodex | DirectPi | DirectOpenCode | DirectCopilot | DirectOmp,
    cwd: Path,
    turns: int,
    prompt: str,
) -> tuple[float, float]:
    """Median seconds of a direct and of a daemon-mediated turn, interleaved."""
    async with daemon.client() as client:
        agent = await create(client, provider, cwd, "[[reply:warm]]")
        await asyncio.to_thread(direct.turn, "[[reply:warm]]")
        direct_times: list[float] = []
        daemon_times: list[float] = []
        # The daemon answers a wait once the turn's end is in the timeline; the timeline's
        # fsync and the agent record's write follow moments later, and ``agent.updated`` is
        # published once the record is on disk. The next measured turn starts after that, so
        # neither side's timing includes the other's disk work.
        settled = asyncio.Event()

        def on_updated(_method: str, params: dict[str, Any]) -> None:
            record = params["agent"]
            if record["id"] == agent and record.get("lastStatus") == "idle":
                settled.set()

        client.on("agent.updated", on_updated)
        await client.subscribe(["agents"])

        async def direct_turn(text: str) -> None:
            started = time.perf_counter()
            await asyncio.to_thread(direct.turn, text)
            direct_times.append(time.perf_counter() - started)

        async def daemon_turn(text: str) -> None:
            settled.clear()
            started = time.perf_counter()
            await client.call("agent.send", {"agentId": agent, "text": text})
            await wait_idle(client, agent)
            daemon_times.append(time.perf_counter() - started)
            await asyncio.wait_for(settled.wait(), TURN_TIMEOUT)

        for index in range(turns):
            text = f"{prompt} turn {index}"
            first, second = (direct_turn, daemon_turn) if index % 2 else (daemon_turn, direct_turn)
            await first(text)
            await second(text)
        await client.call("agent.stop", {"agentId": agent})
    return statistics.median(direct_times), statistics.median(daemon_times)


class Subscriber:
    """One client following the agent's stream (gaps are re-read from ``agent.timeline``)."""

    def __init__(self, daemon: Daemon, agent: str) -> None:
        self.client = daemon.client()
        self.agent = agent
        self.seq = 0
        self.epoch = ""
        self.entries = 0
        self.chars = 0
        self.done = asyncio.Event()
        self.fetching: asyncio.Future[None] | None = None

    async def start(self) -> None:
        await self.client.connect()
        self.client.on("agent.event", lambda _m, params: self._take(params["entry"]))
        self.client.on_gap(lambda _stream, _expected, _got: self._gap())
        await self.client.subscribe([f"agent:{self.agent}"])
        last = await self.client.call(
            "agent.timeline", {"agentId": self.agent, "limit": 1, "tail": True}
        )
        self.epoch = last["epoch"]
        self.seq = last["entries"][-1]["seq"] if last["entries"] else 0

    def _take(self, entry: dict[str, Any]) -> None:
        if entry["seq"] <= self.seq:
            return
        if entry["seq"] != self.seq + 1:
            self._gap()
            return
        self.seq = entry["seq"]
        self.entries += 1
        event = entry["event"]
        if event["type"] == "timeline" and event["item"]["type"] == "assistant_message":
            self.chars += len(event["item"].get("text") or "")
        if event["type"] in ("turn_completed", "turn_failed", "turn_canceled"):
            self.done.set()

    def _gap(self) -> None:
        if self.fetching is None or self.fetching.done():
            self.fetching = asyncio.ensure_future(self._refetch())

    async def _refetch(self) -> None:
        while True:
            page = await self.client.call(
                "agent.timeline",
                {"agentId": self.agent, "after": {"epoch": self.epoch, "seq": self.seq}},
            )
            for entry in page["entries"]:
                self._take(entry)
            if not page["hasMore"]:
                return


async def fan_out(
    daemon: Daemon, direct: DirectClaude, cwd: Path, chunks: int, subscribers: int
) -> dict[str, float]:
    prompt = f"[[long:{chunks}]]"
    started = time.perf_counter()
    lines = await asyncio.to_thread(direct.turn, prompt)
    direct_seconds = time.perf_counter() - started
    async with daemon.client() as owner:
        agent = await create(owner, "claude", cwd, "[[reply:warm]]")
        followers = [Subscriber(daemon, agent) for _ in range(subscribers)]
        for follower in followers:
            await follower.start()
        try:
            started = time.perf_counter()
            await owner.call("agent.send", {"agentId": agent, "text": prompt})
            await asyncio.wait_for(
                asyncio.gather(*(f.done.wait() for f in followers)), TURN_TIMEOUT
            )
            seconds = time.perf_counter() - started
        finally:
            for follower in followers:
                await follower.client.close()
        await owner.call("agent.stop", {"agentId": agent})
    if any(f.chars != len(direct.reply) for f in followers):
        got = sorted({f.chars for f in followers})
        raise RuntimeError(
            f"subscribers got {got} characters of text, expected {len(direct.reply)}"
        )
    entries = statistics.median(f.entries for f in followers)
    chars = statistics.median(f.chars for f in followers)
    return {
        "direct_seconds": direct_seconds,
        "direct_lines": lines,
        "seconds": seconds,
        "entries": entries,
        "chars": chars,
    }


async def idle_memory(daemon: Daemon, cwd: Path, agents: int) -> tuple[int, int, int]:
    """Daemon RSS before and with ``agents`` idle py-acp agents, and the agents' own RSS."""
    process = psutil.Process(daemon.pid)
    before = process.memory_info().rss
    async with daemon.client() as client:
        ids = await asyncio.gather(*(create(client, "py-acp", cwd, None) for _ in range(agents)))
        after = process.memory_info().rss
        programs = 0
        for child in process.children(recursive=True):
            try:
                programs += child.memory_info().rss
            except psutil.Error:
                continue
        for agent in ids:
            await client.call("agent.stop", {"agentId": agent})
    return before, after, programs


# -- main ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=21)
    parser.add_argument("--model-time", type=float, default=0.5)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--subscribers", type=int, default=10)
    parser.add_argument("--idle", type=int, default=20)
    parser.add_argument("--no-codex", action="store_true", help="measure Claude Code only")
    parser.add_argument(
        "--source",
        type=Path,
        help="run the daemon from this source tree (paseo/, plugins/, hookspecs/ of another "
        "commit, e.g. `git archive main paseo plugins hookspecs | tar -x -C DIR`)",
    )
    parser.add_argument(
        "--programs",
        default="claude,codex,pi,opencode,copilot,omp",
        help="comma-separated programs whose turn overhead is measured",
    )
    args = parser.parse_args()
    if args.turns < 1 or args.idle < 1 or args.subscribers < 1:
        parser.error("--turns, --idle and --subscribers must be at least 1")
    if not (BIN_DIR / "claude").exists():
        print(f"the pinned agent programs are missing: run `npm ci` in {BIN_DIR.parent.parent}")
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="paseo-bench-real-") as raw,
        fake_model_process() as fake_url,
        RefusingProxy() as proxy,
    ):
        root = Path(raw)
        cwd = root / "work"
        cwd.mkdir()
        # The daemon's agents inherit its environment, which routes all but loopback to the
        # refusing proxy; the direct programs get the same so both sides run alike.
        claude_env = claude_code_env(
            fake_url, root / "claude", proxy_env=proxy.proxy_env(), max_retries=0
        )
        codex_environment = codex_env(fake_url, root / "codex", proxy_env=proxy.proxy_env())
        pi_environment = {**pi_env(fake_url, root / "pi"), **proxy.proxy_env()}
        opencode_environment = {**opencode_env(fake_url, root / "opencode"), **proxy.proxy_env()}
        copilot_environment = copilot_env(fake_url, root / "copilot", proxy_env=proxy.proxy_env())
        omp_environment = omp_env(fake_url, root / "omp", proxy_env=proxy.proxy_env())
        providers: dict[str, Any] = {
            "claude": {"command": [str(BIN_DIR / "claude")], "env": claude_env},
            "codex": {"command": [str(BIN_DIR / "codex")], "env": codex_environment},
            "pi": {"command": [str(BIN_DIR / "pi")], "env": pi_environment},
            "opencode": {"command": [str(BIN_DIR / "opencode")], "env": opencode_environment},
            "copilot": {
                "command": [str(BIN_DIR / "copilot"), "--acp"],
                "env": copilot_environment,
            },
            "omp": {"command": [str(BIN_DIR / "omp"), "acp"], "env": omp_environment},
            "py-acp": {
                "extends": "acp",
                "label": "Python ACP",
                "command": acp_test_agent.command(),
                "env": {acp_test_agent.STATE_DIR_VARIABLE: str(root / "acp-state")},
            },
        }
        fsync_ms = fsync_cost(root)
        daemon = Daemon(
            root, proxy, providers, source=None if args.source is None else args.source.resolve()
        )
        rows: list[tuple[str, str, float, float]] = []
        try:
            before, after, programs = asyncio.run(idle_memory(daemon, cwd, args.idle))
            wanted = set(args.programs.split(","))
            if args.no_codex:
                wanted.discard("codex")
            programs_to_run: list[tuple[str, Any, dict[str, str]]] = [
                entry
                for entry in (
                    ("claude", DirectClaude, claude_env),
                    ("codex", DirectCodex, codex_environment),
                    ("pi", DirectPi, pi_environment),
                    ("opencode", DirectOpenCode, opencode_environment),
                    ("copilot", DirectCopilot, copilot_environment),
                    ("omp", DirectOmp, omp_environment),
                )
                if entry[0] in wanted
            ]
            for provider, kind, env in programs_to_run:
                direct = kind(env, cwd, root / f"{provider}-direct.err")
                try:
                    for label, prompt, turns in (
                        (INSTANT, "[[reply:done]]", args.turns),
                        (
                            f"{args.model_time:g} s of model streaming",
                            # Ten chunks, nine gaps: the stream lasts --model-time.
                            f"[[slow:10:{args.model_time / 9:g}]]",
                            max(5, args.turns // 2),
                        ),
                    ):
                        direct_s, daemon_s = asyncio.run(
                            turn_overhead(
                                daemon,
                                provider=provider,
                                direct=direct,
                                cwd=cwd,
                                turns=turns,
                                prompt=prompt,
                            )
                        )
                        rows.append((provider, label, direct_s, daemon_s))
                finally:
                    direct.close()
            direct_claude = DirectClaude(claude_env, cwd, root / "fan-direct.err")
            try:
                fan = asyncio.run(
                    fan_out(daemon, direct_claude, cwd, args.chunks, args.subscribers)
                )
            finally:
                direct_claude.close()
        finally:
            daemon.stop()
        attempts = proxy.attempts
    print("turn overhead (medians, interleaved; direct = the same program over its own pipes)")
    print(f"{'program':<9} {'turn':<28} {'direct':>10} {'daemon':>10} {'ratio':>7}")
    worst = 0.0
    for provider, label, direct_s, daemon_s in rows:
        ratio = daemon_s / direct_s
        worst = max(worst, ratio)
        print(
            f"{provider:<9} {label:<28} {direct_s * 1000:>8.0f}ms {daemon_s * 1000:>8.0f}ms "
            f"{ratio:>6.2f}x  (+{(daemon_s - direct_s) * 1000:.0f} ms)"
        )
    print(
        f"target: every turn within {TARGET}x: "
        f"{'met' if worst <= TARGET else 'MISSED'} (worst {worst:.2f}x). The instant-reply rows "
        f"show the fixed cost. Timeline entries are in the file before they are published and "
        f"are fsync-ed by a group commit moments later (one file write + fsync + directory "
        f"fsync takes {fsync_ms:.1f} ms on this disk)"
    )
    per_subscriber = fan["entries"] / fan["seconds"]
    print(
        f"timeline fan-out: one claude agent streams [[long:{args.chunks}]] "
        f"({fan['direct_lines']} protocol events when driven directly, in "
        f"{fan['direct_seconds']:.2f} s = {fan['direct_lines'] / fan['direct_seconds']:,.0f}/s) "
        f"to {args.subscribers} subscribers: send to the last subscriber's turn end "
        f"{fan['seconds']:.2f} s = {fan['direct_lines'] / fan['seconds']:,.0f} program events/s "
        f"ingested; each subscriber got all {fan['chars']:.0f} characters in "
        f"{fan['entries']:.0f} timeline entries (text deltas are coalesced): "
        f"{per_subscriber:,.0f} entries/s per subscriber, "
        f"{per_subscriber * args.subscribers:,.0f} deliveries/s in total"
    )
    mib = 1024 * 1024
    print(
        f"daemon RSS: {before / mib:.1f} MiB with no agent, {after / mib:.1f} MiB with "
        f"{args.idle} idle py-acp agents ({(after - before) / args.idle / 1024:.0f} KiB per "
        f"agent; the agent programs themselves: {programs / mib:.0f} MiB)"
    )
    if attempts:
        print(f"WARNING: outbound attempts reached the refusing proxy: {attempts}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
