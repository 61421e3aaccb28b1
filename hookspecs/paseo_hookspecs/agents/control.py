"""Driving agents: :class:`AgentControl`, and what plugins add to every session.

Every method names an agent by id; :meth:`AgentControl.get` also takes a reference (a unique
id prefix or the exact title). Failures are the contract's errors with stable codes
(:mod:`paseo_hookspecs.errors`): ``NotFound`` (no such agent or request), ``InvalidParams``
(a bad input), ``Conflict`` (the agent's state forbids it, e.g. sending to an archived agent),
``Unavailable`` (the provider is missing or cannot start); a plugin can let them travel on.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from paseo_hookspecs.agents.models import (
    AgentCreate,
    AgentPage,
    AgentQuery,
    PermissionAnswer,
    SendResult,
    SessionExtras,
    TimelinePage,
    WaitResult,
)
from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.interfaces.agent import PromptImage
from paseo_hookspecs.records import AgentRecord

__all__ = ["AgentControl", "SessionContributor"]


class SessionContributor(Protocol):
    """Adds MCP servers and environment to the sessions agents start (e.g. a plugin's tools)."""

    def contribute(self, record: AgentRecord) -> SessionExtras:
        """What ``record``'s session being started, resumed or reloaded gets. Called on the
        daemon's loop, so it must not block; a raising contributor is logged and skipped."""


class AgentControl(Protocol):
    """The daemon's agents, driven on a plugin's behalf (the same paths ``agent.*`` takes)."""

    async def create(self, spec: AgentCreate) -> AgentRecord:
        """Create an agent (and its worktree, when ``spec.worktree`` is given), then send
        ``spec.initialPrompt``. Durable on return: the record (with ``spec.recordFields``) is
        on disk, so a retried create can find it. Writes nothing when it fails."""

    async def get(self, agent: str) -> AgentRecord:
        """The agent ``agent`` names: its id, a unique id prefix or its exact title."""

    async def list(
        self,
        query: AgentQuery | None = None,
        *,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> AgentPage:
        """A page of at most ``limit`` agents (every match without a limit), oldest first
        unless ``query.newest_first``; ``cursor`` is the previous page's ``next_cursor``."""

    async def send(
        self,
        agent_id: str,
        text: str,
        *,
        message_id: str | None = None,
        images: Sequence[PromptImage] = (),
    ) -> SendResult:
        """Start a turn with ``text`` (starting or resuming the session if need be); returns
        once the prompt is recorded. A repeated ``message_id`` is not sent again."""

    async def interrupt(self, agent_id: str) -> AgentRecord:
        """Cancel the running turn; nothing running is success."""

    async def stop(self, agent_id: str) -> AgentRecord:
        """Close the agent's session; the conversation stays resumable (``send`` resumes it)."""

    async def archive(self, agent_id: str, *, force: bool = False) -> AgentRecord:
        """Stop and archive the agent (with ``force`` even while it runs a turn)."""

    async def restore(self, agent_id: str) -> AgentRecord:
        """Unarchive the agent."""

    async def delete(self, agent_id: str) -> None:
        """Stop the agent and delete it (its record becomes a trash tombstone)."""

    async def pending_permissions(self, agent_id: str) -> builtins.list[PermissionRequest]:
        """The agent's permission requests nobody answered yet, oldest first."""

    async def answer_permission(
        self, agent_id: str, request_id: str, answer: PermissionAnswer
    ) -> AgentRecord:
        """Answer a pending request; ``NotFound`` when it is not pending (any more)."""

    async def set_mode(self, agent_id: str, mode_id: str) -> AgentRecord: ...

    async def set_model(self, agent_id: str, model: str) -> AgentRecord: ...

    async def update(
        self,
        agent_id: str,
        *,
        title: str | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> AgentRecord:
        """Set the title (when given) and merge ``labels`` (a ``None`` value removes one)."""

    async def wait(self, agent_id: str, *, timeout: float) -> WaitResult:  # noqa: ASYNC109
        """Return when the agent stops running (idle, waiting for a permission, failed or
        closed), or after ``timeout`` seconds (``outcome == "timeout"``). An agent not running
        returns at once."""

    async def ensure_session(self, agent_id: str) -> AgentRecord:
        """Bring an unarchived agent's provider session back if none runs (after a daemon
        restart), resuming its conversation; the record unchanged when one runs."""

    async def timeline(
        self, agent_id: str, *, after_seq: int | None = None, limit: int = 200
    ) -> TimelinePage:
        """Durable timeline entries of the current epoch after ``after_seq`` (from the start
        without it), oldest first."""

    async def last_reply(self, agent_id: str) -> str | None:
        """The text of the agent's newest reply (``None``: it has not replied)."""

    def add_session_contributor(
        self, contributor: SessionContributor, *, include_internal: bool = False
    ) -> Callable[[], None]:
        """Call ``contributor`` for every session an agent starts from now on (internal
        agents' only with ``include_internal``); returns the function that removes it."""
