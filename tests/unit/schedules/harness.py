"""A schedules service on the real JSON store with a clock the test moves and an agents port
whose turns the test ends."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import NewAgentConfig, ScheduleRecord
from paseo_store_json import JsonStore
from paseo_store_sqlite import SqliteStore

from paseo.schedules.models import ScheduleCreateParams
from paseo.schedules.ports import AgentState, TurnOutcome
from paseo.schedules.service import ScheduleService

START = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)
BOUND = 10.0
"""Seconds any awaited condition gets before the test fails."""


class ManualClock:
    """Wall time that moves only when the test says so."""

    def __init__(self, start: datetime = START) -> None:
        self._now = start
        self._moved = asyncio.Event()
        self.sleeps = 0

    def now(self) -> datetime:
        return self._now

    async def sleep_until(self, deadline: datetime | None, wake: asyncio.Event) -> None:
        self.sleeps += 1
        while not wake.is_set() and (deadline is None or self._now < deadline):
            moved = self._moved
            waiters = [asyncio.ensure_future(wake.wait()), asyncio.ensure_future(moved.wait())]
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()

    def advance(self, delta: timedelta) -> None:
        self._now += delta
        self._moved.set()
        self._moved = asyncio.Event()

    def set(self, moment: datetime) -> None:
        self.advance(moment - self._now)


@dataclass
class Turn:
    agent_id: str
    prompt: str
    labels: dict[str, str]
    done: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: TurnOutcome | None = None


class FakeAgents:
    """Agents that exist in memory; turns end when the test ends them (or at once)."""

    def __init__(self) -> None:
        self.agents: dict[str, AgentState] = {}
        self.turns: list[Turn] = []
        self.hold = False
        """Keep turns running until :meth:`finish` (default: they succeed at once)."""
        self.provider: str | None = "fake"
        self.profiles: dict[str, str] = {}

    def add_agent(self, *, archived: bool = False, busy: bool = False, title: str = "") -> str:
        agent_id = str(uuid.uuid4())
        self.agents[agent_id] = AgentState(id=agent_id, archived=archived, busy=busy)
        if title:
            self.agents[title] = self.agents[agent_id]
        return agent_id

    async def lookup(self, reference: str) -> AgentState | None:
        return self.agents.get(reference)

    def default_provider(self) -> str | None:
        return self.provider

    def profile_provider(self, reference: str) -> str:
        if reference not in self.profiles:
            raise NotFound(f"unknown agent profile {reference!r}")
        return self.profiles[reference]

    async def create(self, config: NewAgentConfig, prompt: str, labels: Mapping[str, str]) -> str:
        agent_id = str(uuid.uuid4())
        self.agents[agent_id] = AgentState(id=agent_id, archived=False, busy=True)
        self._turn(agent_id, prompt, dict(labels))
        return agent_id

    async def prompt(self, agent_id: str, prompt: str, message_id: str) -> None:
        state = self.agents.get(agent_id)
        if state is None:
            raise NotFound(f"no agent {agent_id}")
        if state.archived:
            raise Conflict(f"target agent {agent_id[:8]} is archived")
        if state.busy:
            raise Conflict(f"target agent {agent_id[:8]} is busy with another turn")
        self._turn(agent_id, prompt, {})

    def _turn(self, agent_id: str, prompt: str, labels: dict[str, str]) -> None:
        turn = Turn(agent_id, prompt, labels)
        self.turns.append(turn)
        if not self.hold:
            self.finish(turn, TurnOutcome("succeeded", f"reply to {prompt}"))

    def finish(self, turn: Turn, outcome: TurnOutcome) -> None:
        turn.outcome = outcome
        turn.done.set()

    async def wait_turn(self, agent_id: str, *, within: float) -> TurnOutcome:
        turn = next(t for t in reversed(self.turns) if t.agent_id == agent_id)
        try:
            await asyncio.wait_for(turn.done.wait(), within)
        except TimeoutError:
            return TurnOutcome("failed", None, f"the turn did not end within {within:.0f}s")
        assert turn.outcome is not None
        return turn.outcome


class RecordingPublisher:
    def __init__(self) -> None:
        self.streams: dict[str, frozenset[str]] = {}
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        self.streams[name] = access

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        self.events.append((stream, method, dict(payload)))


class NoConfig:
    @property
    def resolved(self) -> Any:
        return object()


DRIVERS = {"json": JsonStore, "sqlite": SqliteStore}


@dataclass
class Harness:
    store: Store
    service: ScheduleService
    clock: ManualClock
    agents: FakeAgents
    publisher: RecordingPublisher

    async def create(self, **fields: Any) -> ScheduleRecord:
        fields.setdefault("prompt", "do it")
        fields.setdefault("target", {"type": "new-agent", "config": {"cwd": "/tmp"}})
        return await self.service.create(ScheduleCreateParams.model_validate(fields))

    async def record(self, schedule_id: str) -> ScheduleRecord:
        record = await self.store.schedules.get(schedule_id)
        assert record is not None
        return record

    async def until(self, probe: Callable[[], Any], what: str) -> Any:
        """Await ``probe()`` (sync or async) becoming truthy; fail after :data:`BOUND`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BOUND
        while True:
            value = probe()
            if asyncio.iscoroutine(value):
                value = await value
            if value:
                return value
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.005)

    async def runs_settled(self, schedule_id: str, count: int) -> ScheduleRecord:
        """The record once it holds ``count`` runs, none of them running."""

        async def probe() -> ScheduleRecord | None:
            record = await self.record(schedule_id)
            finished = [r for r in record.runs if r.status != "running"]
            return record if len(finished) == count == len(record.runs) else None

        result: ScheduleRecord = await self.until(probe, f"{count} finished runs")
        return result

    async def quiet(self) -> None:
        """Let the scheduler finish reacting to the last change: it is asleep again."""
        before = self.clock.sleeps
        self.service._wake.set()
        await self.until(lambda: self.clock.sleeps > before, "the scheduler to sleep again")


@contextlib.asynccontextmanager
async def running(
    home: Path, *, start: bool = True, driver: str = "json"
) -> AsyncIterator[Harness]:
    store: Store = DRIVERS[driver](home)
    await store.open()
    clock = ManualClock()
    agents = FakeAgents()
    publisher = RecordingPublisher()
    service = ScheduleService(
        store=store, publisher=publisher, agents=agents, clock=clock, config=NoConfig()
    )
    harness = Harness(store, service, clock, agents, publisher)
    try:
        if start:
            await service.start()
        yield harness
    finally:
        await service.stop()
        await store.close()


def run(body: Callable[[], Any]) -> None:
    asyncio.run(asyncio.wait_for(body(), 60))
