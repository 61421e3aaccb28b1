"""Provider sessions of agents: starting or resuming one, and closing it with its processes.

A session is started through the provider registry with the service's process launcher, so
every agent program is tracked durably; whatever a provider loses track of (a start-up cancelled
half-way, a close that failed) is reaped through the tracker by agent id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from paseo_hookspecs.errors import NotFound, PaseoError
from paseo_hookspecs.events import AgentEvent, DenyResolution, PermissionRequested, TurnCanceled
from paseo_hookspecs.interfaces.agent import AgentSession, SessionConfig
from paseo_hookspecs.interfaces.agent import PersistenceHandle as SessionHandle
from paseo_hookspecs.records import AgentRecord, SerializableConfig, dump_record

from paseo.agents.contributions import SessionContributions
from paseo.agents.environments import AgentEnvironments
from paseo.agents.live import AgentStartError, LiveAgent, runtime_changes, start_timeout
from paseo.agents.process import AgentProcessLauncher
from paseo.agents.refill import refill
from paseo.agents.registry import ProviderRegistry
from paseo.agents.roster import AgentRoster
from paseo.agents.tracker import ManagedProcessTracker
from paseo.services import ConfigView

log = logging.getLogger("paseo.agents")

CLOSE_TIMEOUT = 10.0
"""Bound on one session's ``close``; the process tracker reaps whatever is left after it."""


class SessionKeeper:
    """Starts, drops and closes the provider sessions of the roster's agents."""

    def __init__(
        self,
        roster: AgentRoster,
        registry: ProviderRegistry,
        tracker: ManagedProcessTracker,
        launcher: AgentProcessLauncher,
        config: ConfigView,
        *,
        environments: AgentEnvironments,
        contributions: SessionContributions,
    ) -> None:
        self._contributions = contributions
        self._refusals: set[asyncio.Task[None]] = set()
        self._environments = environments
        self._roster = roster
        self._registry = registry
        self._tracker = tracker
        self._launcher = launcher
        self._config = config

    async def ensure(self, agent: LiveAgent, *, adopting: bool = False) -> AgentSession:
        """The agent's live session, started (or resumed from its persistence handle) when
        there is none; ``AgentStartError`` saying what to do when it cannot start. A resumed
        session refills the timeline from the program's history (:mod:`paseo.agents.refill`).
        ``adopting`` (an imported session): a conversation the program does not know is an
        error, not a reason to start a new one."""
        async with agent.lock:
            if agent.state.session is not None:
                return agent.state.session
            record = agent.record
            provider = self._registry.usable(record.provider)
            if record.internal and not provider.supports_no_tools():
                # An internal agent's prompt holds text a user or a repository wrote: it runs
                # only where the program guarantees that no tool runs (issue 27).
                raise AgentStartError(
                    f"the {record.provider} provider cannot guarantee an agent without tools, "
                    "so it runs no internal agent (titles, branch names, commit text)"
                )
            if not await asyncio.to_thread(os.path.isdir, record.cwd):
                raise AgentStartError(
                    f"the agent's directory {record.cwd} does not exist; recreate it or start "
                    "a new agent elsewhere"
                )
            config = self._session_config(record, await self._environments.get(record.id))
            sink = self._sink(agent, agent.state.session_starting())
            launcher = self._launcher
            limit = start_timeout()
            handle = record.persistence
            resumed = False
            try:
                if handle is not None:
                    resumable = SessionHandle.model_validate(dump_record(handle))
                    try:
                        session = await asyncio.wait_for(
                            provider.resume_session(resumable, config, sink, launcher), limit
                        )
                        resumed = True
                    except NotFound as exc:
                        if adopting:
                            raise
                        await self._roster.note(
                            agent,
                            f"could not resume the conversation ({exc.message}); "
                            "starting a new one",
                        )
                        await self._tracker.terminate(agent.id)
                        session = await asyncio.wait_for(
                            provider.create_session(config, sink, launcher), limit
                        )
                else:
                    session = await asyncio.wait_for(
                        provider.create_session(config, sink, launcher), limit
                    )
            except TimeoutError:
                await self._tracker.terminate(agent.id)
                raise AgentStartError(
                    f"the {record.provider} agent did not start within {limit:.0f}s (its program "
                    "hangs during start-up); check that it runs on its own and that its "
                    "configuration is right, then send a new prompt to retry"
                ) from None
            except PaseoError as exc:
                await self._tracker.terminate(agent.id)
                raise AgentStartError(
                    f"the {record.provider} agent could not start: {exc.message}"
                ) from exc
            except OSError as exc:
                await self._tracker.terminate(agent.id)
                raise AgentStartError(
                    f"the {record.provider} agent program could not be run ({exc}); check that "
                    "it is installed (`paseo provider ls`)"
                ) from exc
            except asyncio.CancelledError:
                await self._tracker.terminate(agent.id)
                raise
            agent.state.session_opened(session)
            if resumed:
                await refill(self._roster, agent, session)
            changes = runtime_changes(agent, session)
            if (
                agent.record.lastStatus in ("initializing", "closed", "error")
                and agent.state.next_prompt is None
            ):
                changes["lastStatus"] = "idle"
            await self._roster.save(agent, changes)
            return session

    def _session_config(self, record: AgentRecord, env: dict[str, str]) -> SessionConfig:
        config = record.config or SerializableConfig()
        appended = self._config.resolved.daemon.appendSystemPrompt
        system = "\n\n".join(part for part in (config.systemPrompt, appended) if part) or None
        if record.internal:
            # No tools, so no MCP server either (not even the daemon's own).
            return SessionConfig(
                agentId=record.id,
                cwd=record.cwd,
                model=config.model,
                thinkingOptionId=config.thinkingOptionId,
                systemPrompt=system,
                env={**env, "PASEO_AGENT_ID": record.id},
                extra=dict(config.providerOptions or {}),
                noTools=True,
            )
        servers, contributed_env = self._contributions.extras(record)
        return SessionConfig(
            agentId=record.id,
            cwd=record.cwd,
            modeId=config.modeId,
            model=config.model,
            thinkingOptionId=config.thinkingOptionId,
            featureValues=dict(config.featureValues or {}),
            systemPrompt=system,
            # The daemon's and plugins' servers win: `mcpServers.paseo` is the injected one.
            mcpServers={**(config.mcpServers or {}), **servers},
            # The caller's variables (a Hub create's `env`), the plugins', then the kernel's.
            env={**env, **contributed_env, "PASEO_AGENT_ID": record.id},
            extra=dict(config.providerOptions or {}),
        )

    def _sink(self, agent: LiveAgent, generation: int) -> Callable[[AgentEvent], Awaitable[None]]:
        async def sink(event: AgentEvent) -> None:
            if not agent.state.current(generation):
                return
            if agent.internal and isinstance(event, PermissionRequested):
                # A tool-less session should ask nothing; if its program asks all the same,
                # the answer is no, at once (nobody would ever see the request).
                self._refuse(agent, event.request.id)
                return
            await self._roster.ingest(agent, event, from_provider=True)

        return sink

    def _refuse(self, agent: LiveAgent, request_id: str) -> None:
        session = agent.session

        async def refuse() -> None:
            # After the sink returned: the session registers a request before announcing it.
            target = session or agent.session
            if target is None:
                return
            try:
                await target.respond_permission(
                    request_id, DenyResolution(message="internal agents run no tools")
                )
            except (PaseoError, OSError, RuntimeError) as exc:
                log.warning(
                    "agent %s: refusing permission %s failed: %s", agent.id, request_id, exc
                )

        task = asyncio.get_running_loop().create_task(refuse(), name="refuse-permission")
        self._refusals.add(task)
        task.add_done_callback(self._refusals.discard)

    async def drop(self, agent: LiveAgent) -> None:
        """Close the live session (keeping the persistence handle) and reap its processes."""
        async with agent.lock:
            session = agent.state.session_closed()
            if session is not None:
                try:
                    changes = runtime_changes(agent, session)
                    changes.pop("lastStatus", None)
                    await self._roster.save(agent, changes)
                except Exception:
                    log.exception("agent %s: saving the session handle failed", agent.id)
                try:
                    await asyncio.wait_for(session.close(), CLOSE_TIMEOUT)
                except Exception:
                    log.exception("agent %s: closing the session failed", agent.id)
            await self._tracker.terminate(agent.id)
            # Requests die with their process: nothing can answer them any more.
            self._roster.feed.permissions_withdrawn(agent.record, agent.state.requests_dropped())

    async def cancel_runner(self, agent: LiveAgent) -> bool:
        """Stop queued and starting work; returns whether a prompt was in flight."""
        in_flight = agent.state.cancel_work()
        runner = agent.take_runner()
        if runner is not None and not runner.done():
            in_flight = in_flight or agent.record.lastStatus == "running"
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        return in_flight

    async def close(self, agent: LiveAgent, *, reason: str) -> None:
        """Interrupt, close the provider process, mark ``closed`` (resumable)."""
        in_flight = await self.cancel_runner(agent)
        in_flight = in_flight or agent.record.lastStatus == "running"
        await self.drop(agent)
        if in_flight:
            agent.state.end_newest()
            await self._roster.ingest(
                agent, TurnCanceled(provider=agent.record.provider, reason=reason)
            )
        agent.state.turn_abandoned()
        await agent.timeline.drain()
        changes: dict[str, Any] = {"lastStatus": "closed"}
        if agent.record.attentionReason == "permission":
            # The request died with the process: nothing can answer it any more (a restarted
            # daemon would clear it too, see paseo.agents.recovery).
            changes.update(requiresAttention=False, attentionReason=None, attentionTimestamp=None)
        await self._roster.save(agent, changes)
