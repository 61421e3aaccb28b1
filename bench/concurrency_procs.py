"""The processes of ``bench/concurrency.py`` besides the daemons and the agent programs.

* ``fake STAMPS``: the fake model server, stamping every text chunk it emits: for each streamed
  reply whose text starts with a bench tag, one JSON line ``{"tag", "ends", "times"}`` (the
  character offset each chunk ends at, and ``time.monotonic()`` just before it was written).
* ``client KIND ADDRESS AGENTS OUT``: one subscribed client (``ours``: the JSON-RPC wire over
  the daemon's home; ``ts``: the TypeScript wire at ``ws://ADDRESS/ws``). It follows every agent
  in the comma-separated ``AGENTS``, records each assistant text it receives as (agent,
  characters received so far, ``time.monotonic()``), prints ``ready`` once subscribed, and
  writes what it recorded to ``OUT`` when every agent's turn has ended (or stdin closes).

Each runs in its own process so that neither the fake's emission nor a client's parsing
competes with the other clients (or the direct baseline's readers) for one interpreter's GIL.
``CLOCK_MONOTONIC`` is shared by every process of the machine, so the stamps compare.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

TAG = "ZQ"
"""How a bench reply starts (``ZQ<agent>x<run>:``); other streams are not stamped."""

TURN_ENDS = ("turn_completed", "turn_failed", "turn_canceled")


async def _serve_fake(stamps: Path) -> None:
    from paseo.testing.fake_model import FakeModelServer

    class StampingServer(FakeModelServer):
        async def _stream(self, record: Any, response: Any, events: Any, reply: Any) -> None:
            text = reply.text
            if not text.startswith(TAG):
                await super()._stream(record, response, events, reply)
                return
            tag = text.split(":", 1)[0]
            chunks = iter([c for c in reply.text_chunks if c])
            ends: list[int] = []
            times: list[float] = []
            offset = 0
            record.status = 200
            await response.start_stream(200, "text/event-stream")
            for data, is_text in events:
                if is_text and reply.chunk_delay:
                    await asyncio.sleep(reply.chunk_delay)
                if response.client_gone:
                    record.outcome = "disconnected"
                    return
                if is_text:
                    offset += len(next(chunks, ""))
                    ends.append(offset)
                    times.append(time.monotonic())
                await response.write_chunk(data)
            record.outcome = "complete"
            await response.end_stream()
            with stamps.open("a") as out:
                out.write(json.dumps({"tag": tag, "ends": ends, "times": times}) + "\n")

    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, done.set)
    loop.add_reader(sys.stdin.fileno(), lambda: done.set() if not sys.stdin.read(1) else None)
    async with StampingServer() as fake:
        print(fake.url, flush=True)
        await done.wait()


class _Recorder:
    def __init__(self, agents: list[str]) -> None:
        self.received: dict[str, list[tuple[int, float]]] = {a: [] for a in agents}
        self.chars = dict.fromkeys(agents, 0)
        self.waiting = set(agents)
        self.ended_at = 0.0
        self.done = asyncio.Event()

    def text(self, agent: str, text: str) -> None:
        if agent in self.chars and text:
            self.chars[agent] += len(text)
            self.received[agent].append((self.chars[agent], time.monotonic()))

    def ended(self, agent: str) -> None:
        self.waiting.discard(agent)
        self.ended_at = time.monotonic()
        if not self.waiting:
            self.done.set()


async def _follow_ours(home: str, recorder: _Recorder, agents: list[str]) -> Any:
    from paseo.client import PaseoClient

    client = PaseoClient(home=Path(home), request_timeout=120)
    await client.connect()

    def on_event(_method: str, params: dict[str, Any]) -> None:
        event = params["entry"]["event"]
        kind = event.get("type")
        if kind == "timeline" and event["item"].get("type") == "assistant_message":
            recorder.text(params["agentId"], event["item"].get("text") or "")
        elif kind in TURN_ENDS:
            recorder.ended(params["agentId"])

    client.on("agent.event", on_event)
    await client.subscribe([f"agent:{agent}" for agent in agents])
    return client


async def _follow_ts(address: str, recorder: _Recorder) -> Any:
    from websockets.asyncio.client import connect

    socket = await connect(f"ws://{address}/ws", max_size=None, open_timeout=30, ping_interval=None)
    await socket.send(
        json.dumps(
            {
                "type": "hello",
                "clientId": f"cid_bench_{time.monotonic_ns()}",
                "clientType": "cli",
                "protocolVersion": 1,
                "capabilities": {"reasoning_merge_enum": True},
                "appVersion": "0.1.65-beta.5",
            }
        )
    )

    async def read() -> None:
        async for raw in socket:
            if isinstance(raw, bytes) or '"agent_stream"' not in raw:
                continue
            frame = json.loads(raw)
            message = frame.get("message") or {}
            if message.get("type") != "agent_stream":
                continue
            payload = message["payload"]
            event = payload["event"]
            if event.get("type") == "timeline" and event["item"].get("type") == (
                "assistant_message"
            ):
                recorder.text(payload["agentId"], event["item"].get("text") or "")
            elif event.get("type") in TURN_ENDS:
                recorder.ended(payload["agentId"])

    task = asyncio.ensure_future(read())
    return socket, task


async def _client(kind: str, address: str, agents: list[str], out: Path) -> None:
    recorder = _Recorder(agents)
    loop = asyncio.get_running_loop()
    closed = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), lambda: closed.set() if not sys.stdin.read(1) else None)
    if kind == "ours":
        handle = await _follow_ours(address, recorder, agents)
    else:
        handle = await _follow_ts(address, recorder)
    print("ready", flush=True)
    waiters = [asyncio.ensure_future(recorder.done.wait()), asyncio.ensure_future(closed.wait())]
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED, timeout=600)
    for waiter in waiters:
        waiter.cancel()
    out.write_text(  # noqa: ASYNC240 - once, after the measurement
        json.dumps(
            {
                "received": recorder.received,
                "ended": not recorder.waiting,
                "ended_at": recorder.ended_at,
            }
        )
    )
    if kind == "ours":
        await handle.close()
    else:
        socket, task = handle
        task.cancel()
        await socket.close()
    print("done", flush=True)


def main() -> int:
    if sys.argv[1] == "fake":
        asyncio.run(_serve_fake(Path(sys.argv[2])))
    else:
        kind, address, agents, out = sys.argv[2:6]
        asyncio.run(_client(kind, address, agents.split(","), Path(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
