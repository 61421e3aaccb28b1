"""What the schedules service needs from the agents room, as a Protocol it owns.

The composition root hands :class:`paseo.schedules.service.ScheduleService` an implementation
(today :class:`paseo.schedules.agents_port.AgentServicePort`, over the agent manager); tests
hand it their own. Every method may raise a :class:`paseo_hookspecs.errors.PaseoError`, whose
message then becomes the run's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from paseo_hookspecs.records import NewAgentConfig

SCHEDULE_ID_LABEL = "paseo.schedule-id"
SCHEDULE_RUN_LABEL = "paseo.schedule-run"


@dataclass(frozen=True)
class AgentState:
    """What create-time validation and a run need to know about an existing agent."""

    id: str
    """The full agent id (a reference may have been a prefix or a title)."""
    archived: bool
    busy: bool
    """A turn is running or queued."""


@dataclass(frozen=True)
class TurnOutcome:
    """How the turn a run started ended."""

    status: Literal["succeeded", "failed"]
    reply: str | None
    """The agent's final reply text (whole; the service curates it)."""
    error: str | None = None


class ScheduleAgents(Protocol):
    """Agents as the scheduler uses them."""

    async def lookup(self, reference: str) -> AgentState | None:
        """The agent ``reference`` names (full id, unique id prefix or title), ``None`` when
        none does. An ambiguous reference raises ``InvalidParams``."""

    def default_provider(self) -> str | None:
        """The provider a new agent gets when none is named (``None``: none is ready)."""

    def profile_provider(self, reference: str) -> str:
        """The provider of the agent profile ``reference`` names (its id or name); raises
        ``NotFound`` naming the known profiles when none does."""

    async def create(self, config: NewAgentConfig, prompt: str, labels: Mapping[str, str]) -> str:
        """Create an agent from ``config`` with ``labels`` and send it ``prompt``; returns its
        id once the prompt is accepted (the turn runs on)."""

    async def prompt(self, agent_id: str, prompt: str, message_id: str) -> None:
        """Send ``prompt`` to an existing agent. Raises ``NotFound`` when it is gone and
        ``Conflict`` when it is archived or busy (a scheduled prompt never interrupts work)."""

    async def wait_turn(self, agent_id: str, *, within: float) -> TurnOutcome:
        """Wait at most ``within`` seconds for the turn just started to end: ``succeeded``
        when the agent is idle again, ``failed`` (with ``error``) when the turn failed, the
        agent waits for a permission answer, was stopped, or the time ran out."""
