"""The agent service: the ``agents`` kernel service, a facade over the agent rooms.

It owns every agent record and timeline write, through these rooms:

- :mod:`paseo.agents.roster` — the live agents, record changes, and event ingest (the pure
  rules are in :mod:`paseo.agents.ingest`);
- :mod:`paseo.agents.sessions` — starting, resuming and closing provider sessions;
- :mod:`paseo.agents.runner` — the prompt runner;
- :mod:`paseo.agents.permissions` — pending permission requests;
- :mod:`paseo.agents.recovery` — boot recovery and what is rebuilt from the timeline;
- :mod:`paseo.agents.state` — each agent's live state, a state machine the rooms above tell
  what happened (they do not write its fields).

It depends on narrow ports only (the store, a :class:`~paseo.services.Publisher`, a
:class:`~paseo.services.ConfigView`, the plugin manager as
:class:`~paseo.agents.ports.AgentPlugins`, the workspaces service as
:class:`~paseo.agents.ports.WorkspacePlacement`); the RPC adapter (:mod:`paseo.agents.rpc`)
reaches it through a :class:`~paseo.services.ServiceRef`.

Attention (``finished``, ``error``, ``permission``) is derived by the kernel, never taken from
providers; clients clear it with ``agent.attention.clear``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, Unavailable
from paseo_hookspecs.events import PermissionRequest, Usage
from paseo_hookspecs.interfaces.agent import PromptImage
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import AgentBudget, AgentRecord, TimelineEntry, dump_record
from paseo_hookspecs.records.agent import PersistenceHandle

from paseo.agents import budgets, creation, environments, permissions, recovery
from paseo.agents.contributions import SessionContributions
from paseo.agents.environments import AgentEnvironments
from paseo.agents.feed import AgentFeed, FeedListener, PluginTaps, WireStreams
from paseo.agents.listing import ListFilter, Page
from paseo.agents.live import (
    AGENT_STREAM_PREFIX,
    AGENTS_STREAM,
    STREAM_ACCESS,
    AgentStartError,
    LiveAgent,
)
from paseo.agents.ports import AgentPlugins, WorkspacePlacement
from paseo.agents.process import AgentProcessLauncher
from paseo.agents.profiles import apply_profile, find_profile
from paseo.agents.registry import ProviderRegistry
from paseo.agents.roster import AgentRoster
from paseo.agents.runner import PromptRunner
from paseo.agents.sessions import SessionKeeper
from paseo.agents.settings import option_changes
from paseo.agents.tracker import ManagedProcessTracker, iso_now, reconcile_orphans
from paseo.agents.worktree_setup import SetupSource, setup_event
from paseo.services import ConfigView, Publisher

if TYPE_CHECKING:
    from paseo.agents.models import AgentCreateParams
    from paseo.redaction import Redactor


class _Rooms:
    """The parts built at :meth:`AgentService.start`, once the store is open."""

    def __init__(self, service: AgentService) -> None:
        self.tracker = ManagedProcessTracker(service.store.managed_processes)
        self.launcher = AgentProcessLauncher(self.tracker)
        declared = service.plugins.declared_providers()
        self.registry = ProviderRegistry(
            service.plugins.providers,
            service.provider_overrides,
            {provider_id: p.config_entry() for provider_id, p in declared.items()},
            default=lambda: service.config.resolved.agents.defaultProvider,
        )
        self.sessions = SessionKeeper(
            service.roster,
            self.registry,
            self.tracker,
            self.launcher,
            service.config,
            environments=service.environments,
            contributions=service.contributions,
        )
        self.runner = PromptRunner(service.roster, self.sessions, self.tracker)


class AgentService:
    """See the module docstring."""

    name = "agents"

    def __init__(
        self,
        *,
        store: Store,
        publisher: Publisher,
        config: ConfigView,
        plugins: AgentPlugins,
        placement: WorkspacePlacement,
        environments: AgentEnvironments,
        listeners: Sequence[FeedListener] = (),
        redactor: Redactor | None = None,
        worktree_setup: SetupSource | None = None,
    ) -> None:
        self._worktree_setup = worktree_setup
        """A new worktree's setup, recorded in the timeline of the first agent started there."""
        self.store = store
        self.environments = environments
        self.contributions = SessionContributions()
        """What plugins add to every session (``AgentControl.add_session_contributor``)."""
        self.config = config
        self.plugins = plugins
        self._placement = placement
        # The wire streams first: clients hear of a change before any plugin acts on it.
        feed = AgentFeed([WireStreams(publisher), PluginTaps(plugins), *listeners])
        async def daemon_cap(record: AgentRecord, usage: Usage) -> str | None:
            # Late-bound: the caps are made after the roster, whose accounting they use.
            return await self._caps.reached(record, usage)

        self.roster = AgentRoster(
            store,
            publisher,
            feed,
            redactor=redactor,
            budget_reached=self._budget_reached,
            daemon_cap=daemon_cap,
            placed=placement.legacy_agents_placed,
        )
        self._caps = budgets.DaemonCaps(
            lambda: self.config.resolved.daemon.budgets,
            self.roster.accounting.project_of,
            getattr(store, "usage", None),
        )
        self._budget_stops: set[asyncio.Task[None]] = set()
        self._rooms: _Rooms | None = None
        self._late_adoption: asyncio.Task[None] | None = None

    # ================================================================ service lifecycle

    @property
    def _started(self) -> _Rooms:
        if self._rooms is None:
            raise RuntimeError("the agent service has not started")
        return self._rooms

    @property
    def registry(self) -> ProviderRegistry:
        return self._started.registry

    @property
    def tracker(self) -> ManagedProcessTracker:
        return self._started.tracker

    @property
    def launcher(self) -> AgentProcessLauncher:
        """Starts agent programs (handed to providers, e.g. for model listings)."""
        return self._started.launcher

    @property
    def agents(self) -> dict[str, LiveAgent]:
        """The loaded agents: every one with a session, a run or a waiter, and some at rest
        (see :mod:`paseo.agents.roster`); any other is loaded by :meth:`get` or :meth:`load`."""
        return self.roster.agents

    async def start(self) -> None:
        # Orphans of a crashed daemon first: nothing of theirs may outlive this boot.
        await reconcile_orphans(self.store.managed_processes)
        self.roster.publisher.register_stream(AGENTS_STREAM, STREAM_ACCESS)
        self._rooms = _Rooms(self)
        self._late_adoption = await recovery.adopt_stored(self.roster)

    def provider_overrides(self) -> dict[str, dict[str, Any]]:
        """``agents.providers`` of the configuration in force, as plain dicts."""
        providers = self.config.resolved.agents.providers
        return {
            provider_id: entry.model_dump(mode="json", exclude_none=True)
            for provider_id, entry in providers.items()
        }

    async def serving(self) -> None:
        """The transports listen: start the provider availability refresh, whose first pass
        imports the provider modules after the daemon is ready."""
        self.registry.start()

    async def stop(self) -> None:
        rooms = self._started
        await recovery.stop_late(self._late_adoption)
        await rooms.registry.stop()
        # Only loaded agents can have anything to stop, and closed ones at rest are durable
        # already: stopping costs the live ones only, whatever the number of agents.
        agents = [agent for agent in self.agents.values() if not agent.at_rest]
        await asyncio.gather(
            *(rooms.sessions.close(agent, reason="daemon_stopped") for agent in agents),
            return_exceptions=True,
        )
        # Changes written behind (derived status) reach the disk before the store closes.
        await asyncio.gather(
            *(agent.writer.flush() for agent in self.agents.values() if not agent.writer.idle),
            return_exceptions=True,
        )
        # Whatever a provider lost track of dies with the daemon.
        await rooms.tracker.terminate()

    # ================================================================ lookups

    async def get(self, reference: str) -> LiveAgent:
        """The agent ``reference`` names (id, unique prefix or title), loaded."""
        return await self.roster.get(reference)

    async def load(self, agent_id: str) -> LiveAgent | None:
        """The agent with exactly this id, loaded; ``None`` when there is none."""
        return await self.roster.load(agent_id)

    async def declare_stream(self, name: str) -> None:
        """Declare ``agent:{id}`` by loading the agent (an unknown id declares nothing, so the
        subscription is refused as ``not_found``)."""
        agent_id = name.removeprefix(AGENT_STREAM_PREFIX)
        if agent_id != name:
            await self.roster.load(agent_id)

    async def list_agents(
        self,
        admit: ListFilter,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        newest_first: bool = False,
        now: bool = False,
    ) -> Page:
        """A page of the agents ``admit`` lets through, oldest (or newest) first (``now``: see
        :func:`paseo.agents.listing.list_page`)."""
        return await self.roster.page(
            admit, cursor=cursor, limit=limit, newest_first=newest_first, now=now
        )

    # ================================================================ create

    async def create(
        self,
        params: AgentCreateParams,
        *,
        extra_fields: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AgentRecord:
        """Create an agent, start its session in the background, send ``initialPrompt``.
        ``extra_fields`` go into the record before it is first written (see
        :func:`paseo.agents.creation.new_record`); ``env`` is added to the environment of
        every program the agent runs, and kept out of the record
        (:mod:`paseo.agents.environments`). A ``profile`` fills in what ``params`` leaves
        unset (:mod:`paseo.agents.profiles`)."""
        variables = environments.checked(env or {})
        if params.profile is not None:
            profile = find_profile(self.config.resolved.daemon.agentProfiles, params.profile)
            params = apply_profile(params, profile)
        record = await creation.new_record(
            params, self.registry, self.store.workspaces, self._placement, extra_fields
        )
        if params.initialPrompt:
            # A spent daemon budget refuses the agent before it exists (a schedule's new
            # agent included), not after with a prompt it will never run.
            await self._caps.check(record)
        # Before the record: no session of the agent can start without its variables.
        await self.environments.put(record.id, variables)
        try:
            inserted = await self.store.agents.insert(record)
        except BaseException:
            await self.environments.forget(record.id)  # no record: nothing may keep them
            raise
        if not inserted:
            await self.environments.forget(record.id)
            raise Conflict(f"agent id {record.id} is taken; retry")
        agent = self.roster.adopt(record)
        self.roster.publish_record(agent.record, "created")
        workspace_id = record.workspaceId
        setup = (
            self._worktree_setup(workspace_id) if self._worktree_setup and workspace_id else None
        )
        if setup is not None:
            await self.roster.ingest(agent, setup_event(record.provider, setup))
        if params.initialPrompt:
            await self.send(record.id, params.initialPrompt, params.messageId, params.images)
        else:
            agent.state.want_session()
            self._started.runner.kick(agent)
        return agent.record

    async def import_session(self, params: AgentCreateParams, session_id: str) -> AgentRecord:
        """Adopt the provider's existing conversation ``session_id`` as a new agent: its session
        is resumed at once and the timeline refilled from the program's history. An agent whose
        conversation cannot be resumed is not kept (the error says why)."""
        record = await creation.new_record(
            params, self.registry, self.store.workspaces, self._placement
        )
        loaded = [agent.record for agent in self.agents.values()]
        holder = await creation.holder_of(self.store.agents, loaded, record.provider, session_id)
        if holder is not None:
            raise Conflict(
                f"agent {holder[:8]} already holds {record.provider} conversation "
                f"{session_id}; use it (`paseo send {holder[:8]} …`)",
                data={"agentId": holder},
            )
        handle = PersistenceHandle.model_validate(
            {"provider": record.provider, "sessionId": session_id, "nativeHandle": session_id}
        )
        record = record.model_copy(update={"persistence": handle})
        if not await self.store.agents.insert(record):
            raise Conflict(f"agent id {record.id} is taken; retry")
        agent = self.roster.adopt(record)
        self.roster.publish_record(agent.record, "created")
        try:
            session = await self._started.sessions.ensure(agent, adopting=True)
        except AgentStartError as exc:
            await self.delete(agent.id)
            raise Unavailable(f"cannot import {session_id}: {exc}") from None
        if session.session_id != session_id:
            # The program started a conversation of its own instead (an ACP agent that could
            # not load it): that is not the one asked for.
            await self.delete(agent.id)
            raise NotFound(
                f"the {record.provider} program could not resume conversation {session_id} "
                "(it does not know it, or cannot resume); check the id and --cwd"
            )
        return agent.record

    # ================================================================ operations

    async def send(
        self,
        reference: str,
        text: str,
        message_id: str | None = None,
        images: list[PromptImage] | None = None,
    ) -> tuple[LiveAgent, str, bool]:
        """Queue ``text`` (with ``images``) as the agent's next prompt; returns ``(agent,
        messageId, accepted)`` (see :meth:`paseo.agents.runner.PromptRunner.send`)."""
        agent = await self.get(reference)
        await self.check_budget(agent)
        message_id, accepted = await self._started.runner.send(agent, text, message_id, images)
        return agent, message_id, accepted

    async def check_budget(self, agent: LiveAgent) -> None:
        """Refuse (:class:`~paseo.agents.budgets.BudgetExceeded`) a prompt to an agent that
        spent its budget, or that a spent ``daemon.budgets`` cap covers, before anything
        reaches its program."""
        if agent.record.budget is not None:
            totals = await self.roster.accounting.totals(agent.id)
            what = budgets.reached(agent.record.budget, totals)
            if what is not None:
                raise budgets.refusal(agent.record, what)
        await self._caps.check(agent.record)

    async def set_budget(self, reference: str, budget: AgentBudget | None) -> LiveAgent:
        """Set (``None``: lift) the agent's budget; a ``budget`` attention it raised is
        cleared when the new budget is not reached."""
        agent = await self.get(reference)
        changes: dict[str, Any] = {
            "budget": budget.model_dump(exclude_none=True) if budget else None
        }
        totals = await self.roster.accounting.totals(agent.id)
        if agent.record.attentionReason == "budget" and budgets.reached(budget, totals) is None:
            changes.update(requiresAttention=False, attentionReason=None, attentionTimestamp=None)
        await self.roster.save(agent, changes)
        return agent

    def _budget_reached(self, agent: LiveAgent) -> None:
        """An agent reached its budget: stop work it still has (a prompt queued or running)."""
        if not agent.state.busy:
            return
        task = asyncio.get_running_loop().create_task(self._started.runner.interrupt(agent))
        self._budget_stops.add(task)
        task.add_done_callback(self._budget_stops.discard)

    async def interrupt(self, reference: str) -> LiveAgent:
        """Cancel the running turn and any queued prompt; ``turn_canceled`` follows."""
        agent = await self.get(reference)
        await self._started.runner.interrupt(agent)
        return agent

    async def close_agent(self, reference: str, *, reason: str = "stopped") -> LiveAgent:
        """Interrupt the run and stop the provider process; the agent becomes ``closed``."""
        agent = await self.get(reference)
        await self._started.sessions.close(agent, reason=reason)
        return agent

    async def close_in_workspace(self, workspace_id: str, *, reason: str) -> list[str]:
        """Stop every agent with a session or work in ``workspace_id`` (its worktree is about
        to be removed: nothing may go on running in a deleted directory); their ids. Only
        loaded agents can be running anything (see :meth:`working`)."""
        stopped: list[str] = []
        for agent in list(self.agents.values()):
            if agent.record.workspaceId != workspace_id:
                continue
            if agent.session is None and not agent.busy:
                continue
            await self._started.sessions.close(agent, reason=reason)
            stopped.append(agent.id)
        return stopped

    async def archive(self, reference: str) -> LiveAgent:
        agent = await self.get(reference)
        await self._started.sessions.close(agent, reason="archived")
        if agent.record.archivedAt is None:
            await self.roster.save(agent, {"archivedAt": iso_now()})
        return agent

    async def restore(self, reference: str) -> LiveAgent:
        agent = await self.get(reference)
        if agent.record.archivedAt is not None:
            await self.roster.save(agent, {"archivedAt": None})
        return agent

    async def delete(self, reference: str) -> str:
        """Stop the agent and move it to the trash: its record becomes a tombstone
        (``deletedAt``), kept with its timeline, persistence handle and environment until
        :class:`paseo.trash.service.TrashService` restores or purges it. An internal agent
        (metadata generation) outlives nothing it was started for: it is removed for good."""
        agent = await self.get(reference)
        await self._started.sessions.close(agent, reason="deleted")
        # The whole history goes into the tombstone, and nothing written behind may land after
        # the record left the roster.
        await agent.timeline.drain()
        await agent.writer.flush()
        agent.state.delete()
        agent.timeline.close()
        if agent.internal:
            await self.store.agents.delete(agent.id)
            await self.environments.forget(agent.id)
        else:
            await self.store.agents.update(agent.id, {"deletedAt": iso_now()})
        self.agents.pop(agent.id, None)
        self.roster.publish_record(agent.record, "deleted")
        agent.notify()
        return agent.id

    def readmit(self, record: AgentRecord) -> None:
        """A record restored from the trash is an agent again: closed, its conversation
        resumed (through its persistence handle) by the next prompt. Listings read the store,
        so it is listed once; it is loaded here unless a lookup loaded it meanwhile."""
        agent = self.roster.agents.get(record.id) or self.roster.adopt(record)
        self.roster.publish_record(agent.record, "created")

    async def purged(self, agent_id: str) -> None:
        """A purged agent's cleanup: its environment file (which a tombstone keeps, so a
        restored agent starts with the same variables) goes."""
        await self.environments.forget(agent_id)

    def working(self) -> bool:
        """Whether any agent is at work: a prompt queued or running, a session starting or
        a turn in flight (what the trash's permanent removal waits out). Only loaded agents
        are looked at: one with a session, run or queued prompt is never unloaded, and boot
        loads every agent left live, so an agent not loaded runs nothing."""
        return any(
            agent.busy or agent.record.lastStatus in ("running", "initializing")
            for agent in self.agents.values()
        )

    async def update(
        self, reference: str, *, title: str | None, labels: dict[str, str | None]
    ) -> LiveAgent:
        agent = await self.get(reference)
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = title
            config = dump_record(agent.record.config) if agent.record.config else {}
            changes["config"] = {**config, "title": title}
        if labels:
            merged = dict(agent.record.labels)
            for key, value in labels.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            changes["labels"] = merged
        await self.roster.save(agent, changes)
        return agent

    async def set_option(
        self, reference: str, option: str, value: Any, feature: str | None = None
    ) -> LiveAgent:
        """Set the mode, model, thinking level or a feature, live when a session runs."""
        agent = await self.get(reference)
        if agent.internal and option in ("modeId", "feature"):
            # Its session runs without tools; a mode or a feature could give it some back.
            raise InvalidParams(
                f"agent {agent.id[:8]} is internal: its mode and features are fixed"
            )
        async with agent.lock:
            changes = await option_changes(
                agent, option, value, feature, registry=self.registry, launcher=self.launcher
            )
        await self.roster.save(agent, changes)
        return agent

    async def ensure_session(self, reference: str) -> LiveAgent:
        """Start the provider session if none runs (resuming the stored conversation)."""
        agent = await self.get(reference)
        await self._started.sessions.ensure(agent)
        return agent

    async def reload(self, reference: str) -> LiveAgent:
        """Restart the provider process and resume the conversation in it."""
        agent = await self.get(reference)
        sessions = self._started.sessions
        await sessions.close(agent, reason="reloaded")
        await sessions.ensure(agent)
        return agent

    async def clear_attention(self, reference: str) -> LiveAgent:
        agent = await self.get(reference)
        if agent.record.requiresAttention:
            await self.roster.save(
                agent,
                {"requiresAttention": False, "attentionReason": None, "attentionTimestamp": None},
            )
        return agent

    async def respond_permission(
        self,
        reference: str,
        request_id: str,
        *,
        allow: bool,
        updated_input: dict[str, Any] | None = None,
        message: str | None = None,
        interrupt: bool = False,
    ) -> LiveAgent:
        """Answer a pending request (see :func:`paseo.agents.permissions.respond`)."""
        agent = await self.get(reference)
        await permissions.respond(
            agent,
            request_id,
            allow=allow,
            updated_input=updated_input,
            message=message,
            interrupt=interrupt,
        )
        return agent

    async def pending_permissions(
        self, reference: str | None
    ) -> list[tuple[str, PermissionRequest]]:
        # Requests live with sessions, and an agent with a session is always loaded.
        agents = [await self.get(reference)] if reference else list(self.agents.values())
        return permissions.pending(agents)

    # ================================================================ reads

    def outcome(self, agent: LiveAgent) -> str | None:
        """How a wait on ``agent`` ends now, or ``None`` while it is working."""
        return agent.state.outcome(agent.record.lastStatus)

    async def wait(self, reference: str, within: float) -> tuple[LiveAgent, str]:
        """Wait until the agent is idle, asks for permission, fails, or ``within`` seconds
        pass (outcome ``timeout``)."""
        agent = await self.get(reference)
        deadline = time.monotonic() + within
        while True:
            outcome = self.outcome(agent)
            if outcome is not None:
                return agent, outcome
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return agent, "timeout"
            await agent.wait_changed(remaining)

    async def last_reply(self, agent: LiveAgent) -> str | None:
        """The text of the agent's newest reply (rebuilt from the timeline after a restart)."""
        await recovery.load_reply(self.roster, agent)
        return agent.state.current_reply.text or None

    async def timeline_window(
        self,
        agent: LiveAgent,
        *,
        after: tuple[str, int] | None,
        before: tuple[str, int] | None,
        limit: int,
        tail: bool,
    ) -> tuple[str, list[TimelineEntry], bool, bool]:
        """``(epoch, entries, reset, has_more)`` for a window of the durable timeline."""
        await agent.timeline.drain()
        await agent.timeline.load()
        epoch = agent.timeline.epoch or ""
        reset = any(cursor is not None and cursor[0] != epoch for cursor in (after, before))
        after_seq = after[1] if after is not None and not reset else None
        before_seq = before[1] if before is not None and not reset else None
        if reset:
            tail = True
        entries = await self.store.timeline.read(
            agent.id, after_seq=after_seq, before_seq=before_seq, limit=limit + 1, tail=tail
        )
        has_more = len(entries) > limit
        if has_more:
            entries = entries[1:] if tail else entries[:limit]
        return epoch, entries, reset, has_more
