"""The prompt runner: queueing a client's prompt and handing it to the agent's session.

Per agent one runner task starts (or resumes) the session when needed and gives it the newest
queued prompt. A prompt sent while a run is in progress replaces it: the provider's turn is
interrupted and must end (within :data:`SETTLE_TIMEOUT`, or the session is restarted with the
conversation kept) before the new prompt goes in. A program that died between turns is resumed
in a new process once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from paseo_hookspecs.errors import Conflict, PaseoError, Unavailable
from paseo_hookspecs.events import Timeline, TurnCanceled, TurnFailed, UserMessageItem
from paseo_hookspecs.interfaces.agent import AgentSession, PromptImage

from paseo.agents.live import AgentStartError, LiveAgent
from paseo.agents.recovery import load_seen
from paseo.agents.roster import AgentRoster
from paseo.agents.sessions import SessionKeeper
from paseo.agents.tracker import ManagedProcessTracker, iso_now

log = logging.getLogger("paseo.agents")

SETTLE_TIMEOUT = 10.0
"""Seconds an interrupted turn gets to end before its session is restarted."""


class PromptRunner:
    """See the module docstring."""

    def __init__(
        self, roster: AgentRoster, sessions: SessionKeeper, tracker: ManagedProcessTracker
    ) -> None:
        self._roster = roster
        self._sessions = sessions
        self._tracker = tracker

    async def send(
        self,
        agent: LiveAgent,
        text: str,
        message_id: str | None = None,
        images: list[PromptImage] | None = None,
    ) -> tuple[str, bool]:
        """Queue ``text`` as the agent's next prompt; returns ``(messageId, accepted)``
        (``accepted`` is false for a repeated ``message_id``). A run in progress is
        interrupted and replaced; an archived agent is restored."""
        message_id = message_id or uuid.uuid4().hex
        await load_seen(self._roster, agent)
        if not agent.state.queue_prompt(text, message_id, images):
            return message_id, False
        now = iso_now()
        changes: dict[str, Any] = {
            "lastStatus": "running",
            "lastUserMessageAt": now,
            "lastActivityAt": now,
            "requiresAttention": False,
            "attentionReason": None,
            "attentionTimestamp": None,
        }
        if agent.record.archivedAt is not None:
            changes["archivedAt"] = None
        seq = await self._roster.ingest(
            agent,
            Timeline(
                provider=agent.record.provider,
                item=UserMessageItem(text=text, messageId=message_id),
            ),
        )
        # The status follows from the message, so the record is written behind it.
        await self._roster.save(agent, changes, durable=False)
        # The program gets the prompt while the message is being written; the client's
        # acknowledgement waits for it to be durable.
        self.kick(agent)
        if seq is not None:
            await agent.timeline.committed(seq)
        return message_id, True

    async def interrupt(self, agent: LiveAgent) -> None:
        """Cancel the running turn and any queued prompt; ``turn_canceled`` follows."""
        state = agent.state
        dropped = state.drop_queued()
        starting = agent.starting
        if starting:
            await self._sessions.cancel_runner(agent)
            await self._tracker.terminate(agent.id)
        session = state.session
        if not starting and session is not None and state.provider_prompt is not None:
            state.interrupting()
            await session.interrupt()
        elif starting or dropped:
            state.end_newest()
            await self._roster.ingest(
                agent, TurnCanceled(provider=agent.record.provider, reason="interrupted")
            )

    def kick(self, agent: LiveAgent) -> None:
        """Make sure the agent's runner task runs."""
        agent.kick(lambda: self._run(agent))

    async def _run(self, agent: LiveAgent) -> None:
        """Start the session when needed and hand it the newest queued prompt."""
        state = agent.state
        while state.take_work():
            try:
                session = await self._sessions.ensure(agent)
                if state.replacing:
                    session = await self._settle(agent, session)
                queued = state.take_queued()
                if queued is None:
                    continue
                text, message_id = queued
                await self._prompt(agent, session, text, message_id)
            except asyncio.CancelledError:
                raise
            except AgentStartError as exc:
                state.drop_queued()
                await self._fail(agent, str(exc), code="start_failed")
            except PaseoError as exc:
                state.drop_queued()
                await self._fail(agent, exc.message, code=exc.code)
            except Exception as exc:
                log.exception("agent %s: running the prompt failed", agent.id)
                state.drop_queued()
                await self._fail(agent, f"the agent failed: {exc}", code="internal")

    async def _prompt(
        self, agent: LiveAgent, session: AgentSession, text: str, message_id: str
    ) -> None:
        for attempt in (1, 2):
            images = agent.state.prompt_started(message_id)
            try:
                if images:
                    await session.prompt_with_images(text, images, message_id=message_id)
                else:
                    await session.prompt(text, message_id=message_id)
                agent.state.prompt_delivered(message_id)
                return
            except Conflict:
                # The provider still runs a turn we did not know about: end it first.
                agent.state.turn_abandoned()
                if attempt == 2:
                    raise
                session = await self._settle(agent, session, force=True)
            except (BrokenPipeError, ConnectionResetError, Unavailable) as exc:
                # The program died between turns: resume the conversation in a new process.
                agent.state.turn_abandoned()
                if attempt == 2:
                    detail = session.diagnostics().strip()
                    raise AgentStartError(
                        f"the {agent.record.provider} agent program stopped ({exc})"
                        + (f": {detail}" if detail else "")
                        + "; send a new prompt to retry, or `paseo agent reload` it"
                    ) from exc
                log.info("agent %s: session gone (%s); resuming", agent.id, exc)
                await self._sessions.drop(agent)
                session = await self._sessions.ensure(agent)
            except BaseException:
                agent.state.turn_abandoned()
                raise

    async def _settle(
        self, agent: LiveAgent, session: AgentSession, *, force: bool = False
    ) -> AgentSession:
        """Interrupt the provider's running turn and wait for it to end; a session that does
        not end its turn in time is restarted (the conversation is kept)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.interrupt(), SETTLE_TIMEOUT)
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while (agent.state.provider_prompt is not None or force) and time.monotonic() < deadline:
            force = False
            changed = agent.changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), max(0.0, deadline - time.monotonic()))
        if agent.state.provider_prompt is None:
            return session
        log.warning("agent %s: the interrupted turn did not end; restarting its session", agent.id)
        agent.state.turn_abandoned()
        await self._sessions.drop(agent)
        return await self._sessions.ensure(agent)

    async def _fail(self, agent: LiveAgent, message: str, *, code: str | None = None) -> None:
        """Record a failure of the newest prompt (or of the start): status ``error``."""
        log.warning("agent %s: %s", agent.id, message)
        agent.state.end_newest()
        await self._roster.ingest(
            agent, TurnFailed(provider=agent.record.provider, error=message, code=code or None)
        )
