"""The provider conformance suite: the same scenarios for every agent provider.

It drives a provider directly through :class:`~paseo_hookspecs.interfaces.agent.AgentProvider`
and :class:`~paseo_hookspecs.interfaces.agent.AgentSession` (no daemon) against the scripted
fake model server (:mod:`paseo.testing.fake_model`), with every other outbound connection sent to
a refusing proxy. Usage from a provider's test suite (a file pytest collects)::

    from paseo.testing.provider_conformance import ProviderConformance

    class TestMyProvider(ProviderConformance):
        permission_mode = "ask"          # a mode in which writing a file needs approval

        def make_provider(self):
            return MyProvider()

        def session_env(self, fake, root):
            # Point the program at the fake; give it a private home under ``root``.
            return {"MY_AGENT_BASE_URL": fake.url, "HOME": str(root / "home")}

Scenarios (one test each): a text turn; a file write that needs permission, allowed (the file
exists) and denied (nothing is written, the session carries on); an interrupt in the middle of a
slow stream (``turn_canceled``, and a busy session refuses a second prompt with ``Conflict``); a
second turn on the same session whose model request carries the first turn; close and resume
from the persistence handle, the resumed request carrying the earlier history; five sessions at
once; and after close no process of the session is alive. Every test also checks each event
against the event vocabulary, that events carry the provider's own id, that no process carrying
a test agent's ``PASEO_AGENT_ID`` outlives the test, and that the proxy saw no attempt.

Prompts use the fake's directive grammar (``[[reply:…]]``, ``[[write:PATH:CONTENT]]``,
``[[slow:N]]``; see :data:`paseo.testing.fake_model.DIRECTIVE_HELP`); override the ``prompt_*``
methods when a program needs other wording. The provider is handed the kernel's process launcher
(:func:`kernel_launcher`), exactly as in the daemon, so a provider written against
``paseo-hookspecs`` alone passes unchanged. Override :meth:`ProviderConformance.session_config`
to pass provider options. Tests are synchronous pytest functions that run their own event loop,
so no async pytest plugin is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import psutil
import pytest
from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.events import (
    TERMINAL_TURN_EVENTS,
    AgentEvent,
    AllowResolution,
    DenyResolution,
    PermissionRequested,
    PermissionResolution,
    Timeline,
)
from paseo_hookspecs.interfaces.agent import (
    AgentProvider,
    AgentSession,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher
from paseo_hookspecs.records import new_agent_id
from pydantic import TypeAdapter

from paseo.agents.process import AgentProcessLauncher
from paseo.testing.fake_model import FakeModelServer, RecordedRequest, RefusingProxy

__all__ = [
    "ConformanceHarness",
    "ProviderConformance",
    "RecordingSink",
    "agent_process_ids",
    "assistant_text",
    "conformance_test",
    "kernel_launcher",
]

_EVENT = TypeAdapter[AgentEvent](AgentEvent)


# ---------------------------------------------------------------------------------------------
# Helpers (public: provider-specific tests build on them).
# ---------------------------------------------------------------------------------------------


def kernel_launcher() -> ProcessLauncher:
    """The kernel's process launcher (own process group, kept stderr, bounded termination of
    the group and tagged escapees), for driving a provider outside a daemon. It records no
    process durably: a test has no next boot to reap at."""
    return AgentProcessLauncher()


def agent_process_ids(agent_id: str) -> list[int]:
    """Pids of live processes whose environment holds ``PASEO_AGENT_ID=<agent_id>``.

    Every agent process carries its agent's id (the provider contract), which is how a test
    finds a session's processes without knowing how the provider started them.
    """
    found = []
    for process in psutil.process_iter():
        try:
            ours = process.environ().get("PASEO_AGENT_ID") == agent_id
            if ours and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process.pid)
        except (psutil.Error, OSError):
            # Gone meanwhile, or not ours to read: neither can be the session's process.
            continue
    return found


def _process_groups(pids: Iterable[int]) -> set[int]:
    groups = set()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            groups.add(os.getpgid(pid))
    return groups


def _group_alive(pgid: int) -> bool:
    # Not os.killpg(pgid, 0): zombies count there, and in a container without an init that
    # reaps orphans a dead group's zombies linger.
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                return True
        except (psutil.Error, OSError):
            continue
    return False


def assistant_text(events: Iterable[AgentEvent]) -> str:
    """The assistant's text in ``events`` (every ``assistant_message`` chunk, in order)."""
    return "".join(
        e.item.text
        for e in events
        if isinstance(e, Timeline) and e.item.type == "assistant_message"
    )


class RecordingSink:
    """An :data:`~paseo_hookspecs.interfaces.agent.EventSink` that keeps and checks events.

    Each event must validate as an :data:`~paseo_hookspecs.events.AgentEvent` and name
    ``provider_id``; a violation is kept in :attr:`problems` (raising inside a provider's
    reader would hide it).
    """

    def __init__(self, provider_id: str) -> None:
        self.provider_id = provider_id
        self.events: list[AgentEvent] = []
        self.problems: list[str] = []
        self._changed = asyncio.Condition()

    async def __call__(self, event: AgentEvent) -> None:
        try:
            _EVENT.validate_python(event.model_dump(mode="json"))
        except ValueError as exc:
            self.problems.append(f"malformed event {event!r}: {exc}")
        provider = getattr(event, "provider", None)
        if provider != self.provider_id:
            self.problems.append(
                f"{event.type} names provider {provider!r}, expected {self.provider_id!r}"
            )
        if (
            isinstance(event, Timeline)
            and event.item.type in ("assistant_message", "reasoning")
            and not event.item.messageId
        ):
            self.problems.append(f"{event.item.type} chunk without a messageId")
        async with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    async def wait_for(
        self,
        predicate: Callable[[AgentEvent], bool],
        *,
        after: int = 0,
        within: float,
        what: str,
    ) -> AgentEvent:
        """The first event at index ``after`` or later matching ``predicate``."""

        index = await self.wait_index(predicate, after=after, within=within, what=what)
        return self.events[index]

    def find_index(self, predicate: Callable[[AgentEvent], bool], *, after: int = 0) -> int | None:
        """The index of the first event at ``after`` or later matching ``predicate``."""
        for index in range(after, len(self.events)):
            if predicate(self.events[index]):
                return index
        return None

    async def wait_index(
        self,
        predicate: Callable[[AgentEvent], bool],
        *,
        after: int = 0,
        within: float,
        what: str,
    ) -> int:
        """Like :meth:`wait_for`, returning the event's index."""

        def found() -> bool:
            return self.find_index(predicate, after=after) is not None

        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(found), within)
            except TimeoutError:
                recent = [e.model_dump_json(exclude_none=True)[:200] for e in self.events[-10:]]
                raise AssertionError(
                    f"timed out after {within:.0f}s waiting for {what}; last events:\n"
                    + "\n".join(recent)
                ) from None
        index = self.find_index(predicate, after=after)
        assert index is not None
        return index


@dataclass
class ConformanceAgent:
    """One session under test with the sink that records its events."""

    agent_id: str
    config: SessionConfig
    sink: RecordingSink
    session: AgentSession
    turn_timeout: float

    @property
    def events(self) -> list[AgentEvent]:
        return self.sink.events

    async def start_turn(self, text: str) -> int:
        """Send a prompt; returns the index of the turn's first event."""
        start = len(self.sink.events)
        await self.session.prompt(text, message_id=f"msg-{uuid.uuid4().hex[:8]}")
        return start

    async def wait_turn_end(self, start: int) -> list[AgentEvent]:
        """The turn's events, up to and including its terminal event."""
        end = await self.sink.wait_index(
            lambda e: e.type in TERMINAL_TURN_EVENTS,
            after=start,
            within=self.turn_timeout,
            what="the end of the turn",
        )
        return self.sink.events[start : end + 1]

    async def turn(
        self, text: str, *, permission: PermissionResolution | None = None
    ) -> list[AgentEvent]:
        """Run one turn; answer its first permission request with ``permission`` if given."""
        start = await self.start_turn(text)
        if permission is not None:
            requested = await self.sink.wait_for(
                lambda e: e.type in ("permission_requested", *TERMINAL_TURN_EVENTS),
                after=start,
                within=self.turn_timeout,
                what="a permission request",
            )
            assert isinstance(requested, PermissionRequested), (
                f"the turn ended ({requested.type}) without asking for permission: "
                f"{requested.model_dump_json(exclude_none=True)[:300]}"
            )
            await self.session.respond_permission(requested.request.id, permission)
        return await self.wait_turn_end(start)


@dataclass
class ConformanceHarness:
    """The fake, the proxy, the provider and the sessions of one test."""

    suite: ProviderConformance
    root: Path
    fake: FakeModelServer
    proxy: RefusingProxy
    provider: AgentProvider
    env: dict[str, str]
    launcher: ProcessLauncher = field(default_factory=kernel_launcher)
    """What the provider starts its programs with (the kernel's, as in the daemon)."""
    agents: list[ConformanceAgent] = field(default_factory=list)

    def new_config(self) -> SessionConfig:
        """A config for a new agent with its own working directory."""
        agent_id = new_agent_id()
        cwd = self.root / f"work-{len(self.agents)}-{agent_id[:8]}"
        cwd.mkdir(parents=True)
        env = {**self.env, **self.proxy.proxy_env(), "PASEO_AGENT_ID": agent_id}
        return self.suite.session_config(agent_id=agent_id, cwd=cwd, env=env)

    async def start(self, config: SessionConfig | None = None) -> ConformanceAgent:
        """Create a session (a new agent unless ``config`` is given)."""
        config = config or self.new_config()
        sink = RecordingSink(self.provider.id)
        session = await asyncio.wait_for(
            self.provider.create_session(config, sink, self.launcher), self.suite.start_timeout
        )
        return self._track(config, sink, session)

    async def resume(self, handle: PersistenceHandle, config: SessionConfig) -> ConformanceAgent:
        """Resume the conversation named by ``handle`` in a new session."""
        sink = RecordingSink(self.provider.id)
        session = await asyncio.wait_for(
            self.provider.resume_session(handle, config, sink, self.launcher),
            self.suite.start_timeout,
        )
        return self._track(config, sink, session)

    def _track(
        self, config: SessionConfig, sink: RecordingSink, session: AgentSession
    ) -> ConformanceAgent:
        agent = ConformanceAgent(config.agentId, config, sink, session, self.suite.turn_timeout)
        self.agents.append(agent)
        return agent

    def requests_with(self, marker: str) -> list[RecordedRequest]:
        """The model requests whose prompt contains ``marker``."""
        return [r for r in self.fake.model_requests() if marker in r.prompt]

    async def close_all(self) -> None:
        """Close every session at once, within the suite's ``close_timeout`` for them all, then
        prove none left a process or a problem behind."""
        errors: list[str] = []
        closes = {
            asyncio.ensure_future(agent.session.close()): agent.agent_id for agent in self.agents
        }
        if closes:
            done, pending = await asyncio.wait(closes, timeout=self.suite.close_timeout)
            for task in pending:
                task.cancel()
                errors.append(f"closing {closes[task]} took over {self.suite.close_timeout:.0f} s")
            if pending:
                await asyncio.wait(pending, timeout=5)
            # One failing close must not hide the other sessions' leftovers.
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    errors.append(f"closing {closes[task]} failed: {task.exception()!r}")
        for agent in self.agents:
            left = await asyncio.to_thread(agent_process_ids, agent.agent_id)
            if left:
                errors.append(f"processes of agent {agent.agent_id} outlived close: {left}")
            errors.extend(agent.sink.problems)
        unexpected = self.proxy.unexpected(self.suite.known_outbound_hosts)
        if unexpected:
            errors.append(f"something tried to leave 127.0.0.1: {unexpected}")
        assert not errors, "\n".join(errors)


_Body = Callable[[Any, ConformanceHarness], Coroutine[Any, Any, None]]


def conformance_test(body: _Body) -> Callable[[Any, Path], None]:
    """Turn ``async def test_x(self, h)`` into a synchronous pytest test with a harness."""

    def test(self: ProviderConformance, tmp_path: Path) -> None:
        self.run_conformance_test(body, tmp_path)

    # Not functools.wraps: pytest must see this signature (only tmp_path to inject).
    test.__name__ = body.__name__
    test.__qualname__ = body.__qualname__
    test.__doc__ = body.__doc__
    return test


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class ProviderConformance:
    """Subclass in a ``Test*`` class; implement :meth:`make_provider` and :meth:`session_env`."""

    permission_mode: ClassVar[str | None] = None
    """The ``modeId`` in which writing a file asks for permission (``None``: the default)."""

    concurrency: ClassVar[int] = 5
    """Sessions run at once by the concurrency scenario."""

    start_timeout: ClassVar[float] = 120.0
    """Bound on starting one session (cold starts of big programs on a loaded machine)."""

    turn_timeout: ClassVar[float] = 90.0
    """Bound on one turn."""

    test_timeout: ClassVar[float] = 210.0
    """Bound on one whole scenario, closing its sessions aside."""

    close_timeout: ClassVar[float] = 50.0
    """Bound on closing every session of a scenario (they close at once).

    ``test_timeout + close_timeout`` stays well under a per-test alarm such as pytest-timeout's
    (300 s in this project), so a scenario that hangs fails with its own message naming what
    hung; an alarm firing instead can land while pytest writes the report, which pytest-xdist
    counts as an internal error of the whole run.
    """

    known_outbound_hosts: ClassVar[frozenset[str]] = frozenset()
    """Hosts the program tries whatever it is told (refused like any other); an attempt to
    any other host fails the scenario."""

    slow_chunks: ClassVar[int] = 60
    """Chunks of the slow stream the interrupt scenario cuts (0.2 s apart by default)."""

    # -- adapter hooks ---------------------------------------------------------------------

    def make_provider(self) -> AgentProvider:
        """The provider under test (a new instance per test)."""
        raise NotImplementedError("set make_provider() in the conformance subclass")

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        """Environment that points the program at ``fake`` with a private home under ``root``.

        The suite adds the refusing proxy's variables and ``PASEO_AGENT_ID``.
        """
        raise NotImplementedError("set session_env() in the conformance subclass")

    def session_config(self, *, agent_id: str, cwd: Path, env: dict[str, str]) -> SessionConfig:
        """The config every scenario starts sessions with (override to add options)."""
        return SessionConfig(agentId=agent_id, cwd=str(cwd), env=env, modeId=self.permission_mode)

    def prompt_text(self, marker: str) -> str:
        """A prompt the model answers with text containing ``marker``."""
        return f"Answer with the marker. [[reply:{marker}]]"

    def prompt_write(self, path: str, content: str) -> str:
        """A prompt the model answers by writing ``content`` to ``path`` (relative to cwd)."""
        return f"Create the file. [[write:{path}:{content}]]"

    def prompt_slow(self, chunks: int) -> str:
        """A prompt answered by a slow stream of ``chunks`` pieces (to interrupt)."""
        return f"Stream slowly. [[slow:{chunks}]]"

    # -- running ---------------------------------------------------------------------------

    def run_conformance_test(self, body: _Body, tmp_path: Path) -> None:
        """Run one scenario with a fresh fake, proxy, provider and home under ``tmp_path``."""

        async def main() -> None:
            async with FakeModelServer() as fake, RefusingProxy() as proxy:
                root = tmp_path / "conformance"
                root.mkdir()
                env = self.session_env(fake, root)
                harness = ConformanceHarness(self, root, fake, proxy, self.make_provider(), env)
                try:
                    await asyncio.wait_for(body(self, harness), self.test_timeout)
                finally:
                    await harness.close_all()

        asyncio.run(main())

    # -- scenarios -------------------------------------------------------------------------

    @conformance_test
    async def test_text_turn(self, h: ConformanceHarness) -> None:
        """A prompt gets a streamed answer, the turn completes and the session is resumable."""
        agent = await h.start()
        marker = _unique("text")
        events = await agent.turn(self.prompt_text(marker))
        assert events[0].type == "turn_started", events[0]
        assert events[-1].type == "turn_completed", events[-1]
        assert marker in assistant_text(events)
        assert any(e.type == "thread_started" for e in agent.events), "no thread_started"
        assert agent.session.session_id, "no session id after a turn"
        handle = agent.session.persistence_handle()
        assert handle is not None, "no persistence handle after a turn"
        assert handle.provider == h.provider.id
        assert h.requests_with(marker), "the prompt never reached the model"

    @conformance_test
    async def test_permission_allowed_writes_the_file(self, h: ConformanceHarness) -> None:
        """A file write asks for permission; allowed, the file exists afterwards."""
        agent = await h.start()
        content = _unique("allowed")
        events = await agent.turn(
            self.prompt_write("allowed.txt", content), permission=AllowResolution()
        )
        requested = next(e for e in events if isinstance(e, PermissionRequested))
        assert requested.request.title, "a permission request needs a title"
        assert events[-1].type == "turn_completed", events[-1]
        written = Path(agent.config.cwd) / "allowed.txt"
        assert written.read_text().strip() == content
        tools = [e.item for e in events if isinstance(e, Timeline) and e.item.type == "tool_call"]
        assert any(t.status == "completed" for t in tools), "no completed tool call"
        with pytest.raises(NotFound):
            await agent.session.respond_permission(requested.request.id, AllowResolution())

    @conformance_test
    async def test_permission_denied_writes_nothing(self, h: ConformanceHarness) -> None:
        """Denied, nothing is written and the session takes the next prompt."""
        agent = await h.start()
        events = await agent.turn(
            self.prompt_write("denied.txt", "never"),
            permission=DenyResolution(message="not this file"),
        )
        assert any(isinstance(e, PermissionRequested) for e in events)
        assert not (Path(agent.config.cwd) / "denied.txt").exists()
        marker = _unique("after-deny")
        follow_up = await agent.turn(self.prompt_text(marker))
        assert follow_up[-1].type == "turn_completed", follow_up[-1]
        assert marker in assistant_text(follow_up)

    @conformance_test
    async def test_interrupt_mid_stream(self, h: ConformanceHarness) -> None:
        """An interrupt during a slow stream cancels the turn; the session carries on."""
        agent = await h.start()
        start = await agent.start_turn(self.prompt_slow(self.slow_chunks))
        await agent.sink.wait_for(
            lambda e: isinstance(e, Timeline) and e.item.type == "assistant_message",
            after=start,
            within=self.turn_timeout,
            what="the first streamed chunk",
        )
        with pytest.raises(Conflict):
            await agent.session.prompt("a second prompt", message_id="busy")
        await agent.session.interrupt()
        events = await agent.wait_turn_end(start)
        assert events[-1].type == "turn_canceled", events[-1]
        assert f"chunk {self.slow_chunks}" not in assistant_text(events)
        await agent.session.interrupt()  # idle: a no-op
        marker = _unique("after-interrupt")
        follow_up = await agent.turn(self.prompt_text(marker))
        assert follow_up[-1].type == "turn_completed", follow_up[-1]
        assert marker in assistant_text(follow_up)

    @conformance_test
    async def test_second_turn_keeps_the_conversation(self, h: ConformanceHarness) -> None:
        """The second turn's model request carries the first turn."""
        agent = await h.start()
        first, second = _unique("first"), _unique("second")
        assert (await agent.turn(self.prompt_text(first)))[-1].type == "turn_completed"
        events = await agent.turn(self.prompt_text(second))
        assert events[-1].type == "turn_completed", events[-1]
        assert second in assistant_text(events)
        requests = h.requests_with(second)
        assert requests, "the second prompt never reached the model"
        assert any(first in r.body.decode("utf-8", "replace") for r in requests), (
            "the second request does not carry the first turn"
        )

    @conformance_test
    async def test_close_and_resume(self, h: ConformanceHarness) -> None:
        """Closed and resumed from its persistence handle, the conversation continues."""
        agent = await h.start()
        before, after = _unique("before"), _unique("after")
        assert (await agent.turn(self.prompt_text(before)))[-1].type == "turn_completed"
        handle = agent.session.persistence_handle()
        assert handle is not None
        stored = PersistenceHandle.model_validate_json(handle.model_dump_json())
        await agent.session.close()
        assert await asyncio.to_thread(agent_process_ids, agent.agent_id) == []
        resumed = await h.resume(stored, agent.config)
        events = await resumed.turn(self.prompt_text(after))
        assert events[-1].type == "turn_completed", events[-1]
        assert after in assistant_text(events)
        requests = h.requests_with(after)
        assert requests, "the resumed prompt never reached the model"
        assert any(before in r.body.decode("utf-8", "replace") for r in requests), (
            "the resumed request does not carry the earlier history"
        )

    @conformance_test
    async def test_concurrent_sessions(self, h: ConformanceHarness) -> None:
        """Several sessions run turns at once, each answered with its own text."""
        agents = await asyncio.gather(*(h.start() for _ in range(self.concurrency)))
        markers = [_unique(f"agent{i}") for i in range(len(agents))]
        results = await asyncio.gather(
            *(a.turn(self.prompt_text(m)) for a, m in zip(agents, markers, strict=True))
        )
        for index, events in enumerate(results):
            assert events[-1].type == "turn_completed", events[-1]
            text = assistant_text(events)
            assert markers[index] in text
            assert not any(m in text for m in markers if m != markers[index])

    @conformance_test
    async def test_close_leaves_no_process(self, h: ConformanceHarness) -> None:
        """After close no process of the session (nor its process group) is alive."""
        agent = await h.start()
        assert (await agent.turn(self.prompt_text(_unique("alive"))))[-1].type == "turn_completed"
        pids = await asyncio.to_thread(agent_process_ids, agent.agent_id)
        assert pids, "no process carries PASEO_AGENT_ID: the provider dropped the agent's env"
        groups = _process_groups(pids)
        await agent.session.close()
        assert await asyncio.to_thread(agent_process_ids, agent.agent_id) == []
        assert not [g for g in groups if _group_alive(g)], "a process group outlived close"
        await agent.session.close()  # idempotent
