"""The agent port (``DaemonContext.agents``) against the real daemon's service stack, in this
process: the composed daemon, its store, the scripted provider's real program."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from paseo_hookspecs.agents import (
    AgentCreate,
    AgentObserver,
    AgentQuery,
    Agents,
    PermissionAnswer,
    RecordChange,
    SessionExtras,
    TimelineEntry,
)
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.events import PermissionRequest, PermissionResolution
from paseo_hookspecs.records import AgentRecord

from .conftest import scripted_config


@asynccontextmanager
async def running_daemon(home: Path) -> AsyncIterator[Agents]:
    """The daemon composed and started in this process (transports on a free loopback port);
    stopped, with its logging set back, on exit."""
    from paseo.daemon.options import DaemonOptions
    from paseo.daemon.runtime import Daemon
    from paseo.daemon.wiring import compose
    from paseo.home import HomeLayout, HomeLock

    paseo_log = logging.getLogger("paseo")
    saved = (list(paseo_log.handlers), paseo_log.level, paseo_log.propagate)
    layout = HomeLayout(home)
    lock = HomeLock(layout.lock, layout.pid)
    lock.acquire()
    daemon = None
    try:
        daemon = Daemon.prepare(layout, DaemonOptions(home=home, env=dict(os.environ)))
        await daemon.start(compose)
        yield daemon.agents
    finally:
        if daemon is not None:
            await daemon.shutdown()
        lock.release()
        for handler in list(paseo_log.handlers):
            paseo_log.removeHandler(handler)
            handler.close()
        for handler in saved[0]:
            paseo_log.addHandler(handler)
        paseo_log.setLevel(saved[1])
        paseo_log.propagate = saved[2]


def run(paseo_home: Path, scenario: Callable[[Agents], Awaitable[None]]) -> None:
    paseo_home.mkdir(parents=True, exist_ok=True)
    (paseo_home / "config.json").write_text(json.dumps(scripted_config()))

    async def main() -> None:
        async with running_daemon(paseo_home) as agents, asyncio.timeout(60):
            await scenario(agents)

    asyncio.run(main())


class Watcher(AgentObserver):
    """Every callback about the agents it watches, in arrival order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.requests: asyncio.Queue[tuple[str, PermissionRequest]] = asyncio.Queue()
        self.changed = asyncio.Event()

    def _note(self, *call: Any) -> None:
        self.calls.append(call)
        self.changed.set()

    async def on_record(self, change: RecordChange) -> None:
        self._note("record", change.record.id, change.kind, change.record.lastStatus)

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        self._note("event", agent_id, entry.event.type)

    async def on_attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        self._note("attention", agent_id, reason)

    async def on_permission_requested(self, agent_id: str, request: PermissionRequest) -> None:
        self._note("requested", agent_id, request.id)
        await self.requests.put((agent_id, request))

    async def on_permission_resolved(
        self, agent_id: str, request_id: str, outcome: PermissionResolution | None
    ) -> None:
        self._note("resolved", agent_id, outcome.behavior if outcome else None)

    async def until(self, call: tuple[Any, ...]) -> None:
        while call not in self.calls:
            self.changed.clear()
            await self.changed.wait()


def test_create_send_wait_and_observe_through_the_port(paseo_home: Path, workdir: Path) -> None:
    async def scenario(agents: Agents) -> None:
        watcher = Watcher()
        subscription = agents.subscribe(watcher, name="test")
        record = await agents.create(
            AgentCreate(
                provider="scripted",
                cwd=str(workdir),
                title="port agent",
                labels={"via": "port"},
                initialPrompt="hello there",
                recordFields={"owner": {"kind": "test", "ref": "x1"}},
            )
        )
        # Durable on return, with the plugin's own field kept in the record.
        assert (await agents.get(record.id)).model_extra == {"owner": {"kind": "test", "ref": "x1"}}
        waited = await agents.wait(record.id, timeout=30)
        assert waited.outcome == "idle"
        assert waited.last_reply == "echo: hello there"
        assert await agents.last_reply(record.id) == "echo: hello there"
        await watcher.until(("attention", record.id, "finished"))
        mine = [c for c in watcher.calls if c[1] == record.id]
        assert mine[0] == ("record", record.id, "created", "initializing")
        events = [c[2] for c in mine if c[0] == "event"]
        assert events.index("turn_started") < events.index("turn_completed")
        assert events.index("turn_completed") < events.index("attention_required")

        sent = await agents.send(record.id, "again", message_id="m-2")
        assert (sent.message_id, sent.accepted) == ("m-2", True)
        repeat = await agents.send(record.id, "again", message_id="m-2")
        assert not repeat.accepted
        assert (await agents.wait(record.id, timeout=30)).last_reply == "echo: again"

        page = await agents.timeline(record.id)
        assert page.entries[0].seq == 1
        after = await agents.timeline(record.id, after_seq=page.entries[-2].seq)
        assert [e.seq for e in after.entries] == [page.entries[-1].seq]
        assert after.epoch == page.epoch

        listed = await agents.list(AgentQuery(labels={"via": "port"}))
        assert [r.id for r in listed.items] == [record.id]
        assert (await agents.list(AgentQuery(cwd="/nowhere"))).items == []
        assert (await agents.get("port agent")).id == record.id  # by title
        updated = await agents.update(record.id, title="renamed", labels={"via": None, "k": "v"})
        assert (updated.title, updated.labels) == ("renamed", {"k": "v"})
        subscription.close()

    run(paseo_home, scenario)


def test_permissions_interrupt_archive_restore_delete(paseo_home: Path, workdir: Path) -> None:
    async def scenario(agents: Agents) -> None:
        watcher = Watcher()
        agents.subscribe(watcher, name="test")
        record = await agents.create(AgentCreate(provider="scripted", cwd=str(workdir)))
        await agents.send(record.id, "[[write:out.txt:from the port]]")
        agent_id, request = await watcher.requests.get()
        assert agent_id == record.id
        assert (await agents.wait(record.id, timeout=30)).outcome == "permission"
        assert [r.id for r in await agents.pending_permissions(record.id)] == [request.id]
        await agents.answer_permission(record.id, request.id, PermissionAnswer(behavior="allow"))
        await watcher.until(("resolved", record.id, "allow"))
        assert (await agents.wait(record.id, timeout=30)).last_reply == "wrote out.txt"
        assert (workdir / "out.txt").read_text() == "from the port"
        with pytest.raises(NotFound):
            await agents.answer_permission(record.id, request.id, PermissionAnswer(behavior="deny"))

        await agents.send(record.id, "[[slow:30]] take your time")
        await watcher.until(("event", record.id, "turn_started"))
        with pytest.raises(Conflict):
            await agents.archive(record.id)  # running: not without force
        await agents.interrupt(record.id)
        await watcher.until(("event", record.id, "turn_canceled"))
        assert (await agents.wait(record.id, timeout=30)).outcome == "idle"

        stopped = await agents.stop(record.id)
        assert stopped.lastStatus == "closed"
        archived = await agents.archive(record.id)
        assert archived.archivedAt is not None
        assert (await agents.list()).items == []
        assert [r.id for r in (await agents.list(AgentQuery(include_archived=True))).items] == [
            record.id
        ]
        restored = await agents.restore(record.id)
        assert restored.archivedAt is None
        await agents.delete(record.id)
        await watcher.until(("record", record.id, "deleted", "closed"))
        with pytest.raises(NotFound):
            await agents.get(record.id)

    run(paseo_home, scenario)


def test_refused_creates_write_nothing(paseo_home: Path, workdir: Path) -> None:
    async def scenario(agents: Agents) -> None:
        with pytest.raises(InvalidParams, match="lastStatus"):
            await agents.create(
                AgentCreate(
                    provider="scripted", cwd=str(workdir), recordFields={"lastStatus": "idle"}
                )
            )
        with pytest.raises(InvalidParams, match="cwd"):
            await agents.create(
                AgentCreate(
                    provider="scripted", worktree={"type": "checkout-branch", "branch": "x"}
                )
            )
        assert (await agents.list(AgentQuery(include_archived=True))).items == []

    run(paseo_home, scenario)


class Tools:
    """A session contributor: an environment variable for every session."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def contribute(self, record: AgentRecord) -> SessionExtras:
        self.seen.append(record.id)
        return SessionExtras(env={"PORT_TEST_TOKEN": f"token-{record.id[:8]}"})


def test_session_contributors_reach_every_session(paseo_home: Path, workdir: Path) -> None:
    async def scenario(agents: Agents) -> None:
        tools = Tools()
        remove = agents.add_session_contributor(tools)
        record = await agents.create(
            AgentCreate(provider="scripted", cwd=str(workdir), initialPrompt="[[pid]]")
        )
        reply = (await agents.wait(record.id, timeout=30)).last_reply or ""
        pid = int(reply.removeprefix("pid="))
        environ = (await asyncio.to_thread(Path(f"/proc/{pid}/environ").read_bytes)).split(b"\0")
        assert f"PORT_TEST_TOKEN=token-{record.id[:8]}".encode() in environ
        assert tools.seen == [record.id]
        remove()
        await agents.stop(record.id)
        await agents.send(record.id, "resumed")
        await agents.wait(record.id, timeout=30)
        assert tools.seen == [record.id]  # removed: not asked for the resumed session

    run(paseo_home, scenario)


PORT_PLUGIN = Path(__file__).resolve().parent / "port_plugin"


def test_a_plugin_on_the_port_alone_observes_and_answers_through_a_real_daemon(
    agent_daemon_factory: Callable[..., Any], workdir: Path, paseo_home: Path
) -> None:
    from paseo.client import SyncClient

    config = scripted_config(
        {
            "plugins": {
                **scripted_config()["plugins"],
                "porttest": {"source": "directory", "path": str(PORT_PLUGIN)},
            }
        }
    )
    daemon = agent_daemon_factory(config)
    with SyncClient(home=daemon.home, client_type="sdk") as client:
        agent = client.call(
            "agent.create",
            {
                "provider": "scripted",
                "cwd": str(workdir),
                "initialPrompt": "[[write:plugin.txt:allowed by the plugin]]",
            },
        )["agent"]
        # Until the plugin has answered (a wait returns at once while a request is pending).
        deadline = time.monotonic() + 30
        while True:
            waited = client.call("agent.wait", {"agentId": agent["id"], "timeout": 30})
            if waited["outcome"] != "permission" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert (waited["outcome"], waited["lastMessage"]) == ("idle", "wrote plugin.txt")
    assert (workdir / "plugin.txt").read_text() == "allowed by the plugin"
    log = paseo_home / "porttest.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    mine = [line for line in lines if line[1] == agent["id"]]
    kinds = [line[0] for line in mine]
    assert mine[0] == ["record", agent["id"], "created"]
    assert kinds.index("requested") < kinds.index("resolved")
    assert ["resolved", agent["id"], mine[kinds.index("requested")][2], "allow"] in mine
