"""Agent providers and their sessions.

A provider translates one agent program's native protocol (Claude Code's stream-json control
protocol, Codex's app-server JSON-RPC, the Agent Client Protocol, …) into Paseo's one event
vocabulary. The provider object is cheap and long-lived; a session owns one running agent
process.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

EventSink = Callable[[Mapping[str, Any]], Awaitable[None]]
"""Where a session delivers its events (``{"type": "turn_started", …}``), in order."""


class AgentSession(ABC):
    """One live agent: a provider process and its conversation.

    Sessions deliver events through the sink given at creation, strictly in order, and never
    raise from a background task: failures become ``turn_failed`` events.
    """

    @property
    @abstractmethod
    def session_id(self) -> str | None:
        """The provider's session id once known (``None`` before the first turn starts)."""

    @abstractmethod
    def persistence_handle(self) -> Mapping[str, Any] | None:
        """``{provider, sessionId, nativeHandle?, metadata?}`` to resume this conversation later,
        or ``None`` while the provider has not assigned a session yet."""

    @abstractmethod
    async def prompt(self, text: str, *, message_id: str) -> None:
        """Start a turn with ``text``. Returns once the turn is accepted, not when it ends; the
        end arrives as ``turn_completed``, ``turn_failed`` or ``turn_canceled``."""

    @abstractmethod
    async def interrupt(self) -> None:
        """Cancel the running turn, if any. Idempotent; a ``turn_canceled`` event follows."""

    @abstractmethod
    async def respond_permission(self, request_id: str, response: Mapping[str, Any]) -> None:
        """Answer a pending permission request: ``{"behavior": "allow", "updatedInput"?}`` or
        ``{"behavior": "deny", "message"?, "interrupt"?}``. Raises ``NotFound`` when the
        request is not pending."""

    @abstractmethod
    async def set_mode(self, mode_id: str) -> None:
        """Switch the permission/behaviour mode; raises ``InvalidParams`` for an unknown id."""

    @abstractmethod
    async def set_model(self, model: str) -> None:
        """Switch the model for later turns."""

    @abstractmethod
    async def set_thinking(self, option_id: str) -> None:
        """Switch the thinking/reasoning level for later turns."""

    async def set_feature(self, feature_id: str, value: Any) -> None:
        """Set a provider feature (toggle or select). Providers without features refuse."""
        from paseo_hookspecs.errors import InvalidParams

        raise InvalidParams(f"unknown feature {feature_id!r}")

    @abstractmethod
    async def close(self) -> None:
        """Stop the agent process and reap it (its whole process group). Idempotent; after it
        returns no process of this session is alive."""


class AgentProvider(ABC):
    """A kind of agent (``claude``, ``codex``, ``acp``, …) that can start sessions."""

    id: str
    """Stable provider id as stored in agent records (``^[a-z][a-z0-9-]*$``)."""

    label: str
    """Human-readable name."""

    @abstractmethod
    async def availability(self) -> Mapping[str, Any]:
        """``{"status": "ready"|"error"|"unavailable", "reason"?}`` — e.g. unavailable when the
        agent program is not installed. Must not start a long-lived process."""

    @abstractmethod
    async def list_models(self) -> list[Mapping[str, Any]]:
        """Models as ``{"id", "label", "thinkingOptions"?: [...], "default"?}``."""

    @abstractmethod
    async def list_modes(self) -> list[Mapping[str, Any]]:
        """Modes as ``{"id", "label", "description"?}``; an empty list when the provider has
        none."""

    @abstractmethod
    async def create_session(self, config: Mapping[str, Any], sink: EventSink) -> AgentSession:
        """Start a new session with the agent's ``config`` (cwd, modeId, model,
        thinkingOptionId, systemPrompt, mcpServers, env, …). Raises ``Unavailable`` when the
        program is missing; the error message says what to install."""

    @abstractmethod
    async def resume_session(
        self, handle: Mapping[str, Any], config: Mapping[str, Any], sink: EventSink
    ) -> AgentSession:
        """Reattach to the conversation named by a persistence ``handle``."""
