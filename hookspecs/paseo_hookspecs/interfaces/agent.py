"""Agent providers and their sessions.

A provider translates one agent program's native protocol (Claude Code's stream-json control
protocol, Codex's app-server JSON-RPC, the Agent Client Protocol, …) into the one event
vocabulary of :mod:`paseo_hookspecs.events`. The provider object is cheap and long-lived; a
session owns one running agent process.

Process rules every session follows: the agent program is started through the
:class:`~paseo_hookspecs.process.ProcessLauncher` the kernel hands to ``create_session`` /
``resume_session`` (and to ``list_models`` / ``list_modes``, for providers that must ask a
running program), which puts it in its own process group, gives it ``PASEO_AGENT_ID`` (pass
``SessionConfig.env``), keeps its stderr and tracks it durably; :meth:`AgentSession.close`
returns only once no process of the session is alive (``AgentProcess.terminate`` does that).
Shared plumbing for line-framed JSON-RPC programs is in :mod:`paseo_hookspecs.stdio_rpc`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from paseo_hookspecs.events import AgentEvent, PermissionResolution, TimelineItem
from paseo_hookspecs.process import ProcessLauncher
from paseo_hookspecs.records.agent import AgentFeature
from paseo_hookspecs.terminals import TerminalProfile

EventSink = Callable[[AgentEvent], Awaitable[None]]
"""Where a session delivers its events, in order. Awaiting it applies back-pressure."""


class SessionConfig(BaseModel):
    """How to start (or resume) a session."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    agentId: str
    cwd: str
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] = Field(default_factory=dict)
    systemPrompt: str | None = None
    """Already includes ``daemon.appendSystemPrompt``."""
    mcpServers: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment for the agent process (always holds ``PASEO_AGENT_ID``)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific options."""
    noTools: bool = False
    """Run with no tools at all (the kernel's internal agents: titles, branch names, commit and
    change-request text, whose prompt holds text a user or a repository wrote). The program
    must offer the model nothing that runs a command, changes a file or reaches the network,
    by its own strictest mechanism (an empty tool list, a read-only sandbox whose approvals are
    refused), never a mode that approves by itself; ``mcpServers`` is then empty. The kernel
    gives it only to a provider whose :meth:`AgentProvider.supports_no_tools` is true, and
    refuses every permission request such a session still makes (contract 2.0)."""


class PromptImage(BaseModel):
    """An image attached to a prompt (``paseo run --image``)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    mediaType: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: str = Field(min_length=1)
    """The image file's bytes, base64-encoded (no ``data:`` prefix)."""


class ThinkingOption(BaseModel):
    id: str
    label: str


class ModelInfo(BaseModel):
    id: str
    label: str
    default: bool = False
    thinkingOptions: list[ThinkingOption] = Field(default_factory=list)


ModeAccess = Literal["read-only", "ask", "edits", "full"]
"""How far a mode lets an agent act on its own, least to most: ``read-only`` changes nothing,
``ask`` asks before changes and commands, ``edits`` changes the workspace without asking,
``full`` never asks."""


class ModeInfo(BaseModel):
    id: str
    label: str
    description: str | None = None
    access: ModeAccess | None = None
    """The mode's :data:`ModeAccess` level, which maps modes across providers (a child agent
    on another provider starts in the mode of its parent's level); ``None``: not comparable."""


class Availability(BaseModel):
    status: Literal["ready", "loading", "error", "unavailable"]
    reason: str | None = None
    """Why it is not ready, and what to do about it."""


class SlashCommand(BaseModel):
    """A command the agent's program takes as a prompt starting with ``/name`` (contract 1.3)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(min_length=1)
    """Without the leading slash."""
    description: str = ""
    argumentHint: str = ""
    """What follows the name, e.g. ``<file>`` (empty: no arguments)."""

    @classmethod
    def listed(cls, name: object, description: object = None, hint: object = None) -> Self | None:
        """A command as a program lists it, read leniently: ``None`` without a name, the
        leading ``/`` dropped, a description or hint that is not a string read as empty."""
        if not isinstance(name, str) or not name.removeprefix("/"):
            return None
        return cls(
            name=name.removeprefix("/"),
            description=description if isinstance(description, str) else "",
            argumentHint=hint if isinstance(hint, str) else "",
        )


class DraftConfig(BaseModel):
    """An agent being composed, not started yet: what :meth:`AgentProvider.list_features` may
    take into account (contract 1.3)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    cwd: str
    modeId: str | None = None
    model: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] = Field(default_factory=dict)


class PersistenceHandle(BaseModel):
    """What is needed to resume a conversation later (stored in the agent record)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    provider: str
    sessionId: str
    nativeHandle: Any = None
    metadata: dict[str, Any] | None = None


class AgentSession(ABC):
    """One live agent: a provider process and its conversation.

    Sessions deliver events through the sink given at creation, strictly in order, and never
    raise from a background task: failures become ``turn_failed`` events (and a process that
    dies unexpectedly also yields ``turn_failed`` when a turn was running).

    Implement and register: a session is returned by your provider's ``create_session`` /
    ``resume_session``, never registered on its own::

        class MySession(AgentSession):
            def __init__(self, process: AgentProcess, sink: EventSink) -> None:
                self._process, self._sink, self._id = process, sink, None

            @property
            def session_id(self) -> str | None:
                return self._id

            def persistence_handle(self) -> PersistenceHandle | None:
                return PersistenceHandle(provider="mine", sessionId=self._id) if self._id else None

            async def prompt(self, text: str, *, message_id: str) -> None:
                await self._sink(TurnStarted(provider="mine"))
                await self._process.write_line({"prompt": text})

            async def interrupt(self) -> None:
                await self._process.write_line({"cancel": True})

            async def respond_permission(self, request_id, resolution) -> None:
                raise NotFound(f"no pending permission request {request_id!r}")

            async def close(self) -> None:
                await self._process.terminate()
    """

    @property
    @abstractmethod
    def session_id(self) -> str | None:
        """The provider's session id once known (``None`` before the program assigned one)."""

    @abstractmethod
    def persistence_handle(self) -> PersistenceHandle | None:
        """How to resume this conversation, or ``None`` while there is no session id yet."""

    def modes(self) -> list[ModeInfo] | None:
        """The modes this live session offers, as its program reported them (ACP agents say so
        when a session starts), or ``None`` when the session has no report of its own and the
        provider's :meth:`AgentProvider.list_modes` applies. Cheap: no process is started."""
        return None

    def commands(self) -> list[SlashCommand] | None:
        """The slash commands this live session takes, as its program reported them (Claude
        Code's ``initialize`` answer, ACP ``available_commands_update``), or ``None`` when the
        program reports none (the default). Cheap: no process is started (contract 1.3)."""
        return None

    def features(self) -> list[AgentFeature] | None:
        """The provider features of this live session with their current values (the ones
        :meth:`set_feature` sets), or ``None`` when it has none (the default). Read when the
        session starts, after each turn and after :meth:`set_feature`, and stored in the agent
        record's ``features`` (contract 1.3)."""
        return None

    async def history(self) -> list[TimelineItem] | None:
        """The conversation as the program itself keeps it, oldest first, or ``None`` when it
        keeps none this session can read (the default).

        Asked once after a session was resumed (and when a session is imported): the kernel
        appends what its timeline lacks, so an imported conversation, or turns taken outside
        Paseo, show up without duplicating what Paseo recorded. Give the user and assistant
        messages, one ``UserMessageItem`` / ``AssistantMessageItem`` per message with its whole
        text (other items may be given; the kernel keeps only the messages). Read it from the
        program (Codex ``thread/read``, the replay of ACP ``session/load``) or from the files it
        writes (Claude Code's session transcript). The kernel bounds the call in time."""
        return None

    def runtime_info(self) -> dict[str, Any]:
        """Live facts (``model``, ``modeId``, ``thinkingOptionId``, ``sessionId``, …)."""
        return {"sessionId": self.session_id}

    @abstractmethod
    async def prompt(self, text: str, *, message_id: str) -> None:
        """Start a turn with ``text``. Returns once the turn is accepted, not when it ends; the
        end arrives as ``turn_completed``, ``turn_failed`` or ``turn_canceled``. Raises
        ``Conflict`` if a turn is already running (the manager interrupts first)."""

    async def prompt_with_images(
        self, text: str, images: list[PromptImage], *, message_id: str
    ) -> None:
        """:meth:`prompt` with images the program shows the model along with ``text``. By
        default ``InvalidParams``: a provider whose program takes images overrides it (and one
        that takes them only sometimes, like an ACP agent without ``promptCapabilities.image``,
        raises ``InvalidParams`` saying so)."""
        from paseo_hookspecs.errors import InvalidParams

        raise InvalidParams("this provider's program does not take images with a prompt")

    @abstractmethod
    async def interrupt(self) -> None:
        """Cancel the running turn, if any. Idempotent; ``turn_canceled`` follows."""

    @abstractmethod
    async def respond_permission(self, request_id: str, resolution: PermissionResolution) -> None:
        """Answer a pending permission request. Raises ``NotFound`` when it is not pending."""

    async def set_mode(self, mode_id: str) -> None:
        """Switch the permission/behaviour mode; ``InvalidParams`` for an unknown id."""
        from paseo_hookspecs.errors import InvalidParams

        raise InvalidParams(f"this provider has no mode {mode_id!r}")

    async def set_model(self, model: str) -> None:
        """Switch the model for later turns."""
        from paseo_hookspecs.errors import InvalidParams

        raise InvalidParams("this provider cannot switch models in a running session")

    async def set_thinking(self, option_id: str) -> None:
        """Switch the thinking/reasoning level for later turns."""
        from paseo_hookspecs.errors import InvalidParams

        raise InvalidParams("this provider has no thinking levels")

    async def set_feature(self, feature_id: str, value: Any) -> None:
        """Set a provider feature (toggle or select)."""
        from paseo_hookspecs.errors import InvalidParams

        raise InvalidParams(f"unknown feature {feature_id!r}")

    @abstractmethod
    async def close(self) -> None:
        """Stop the agent process and reap its whole process group. Idempotent; after it
        returns no process of this session is alive."""

    def diagnostics(self) -> str:
        """The tail of the program's stderr, for error messages."""
        return ""


class AgentProvider(ABC):
    """A kind of agent (``claude``, ``codex``, ``acp``, …) that can start sessions.

    Implement and register (a plugin module listed under ``[project.entry-points.paseo]``)::

        class MyProvider(AgentProvider):
            id, label = "mine", "My agent"

            async def availability(self) -> Availability:
                found = shutil.which("my-agent")
                return Availability(status="ready" if found else "unavailable",
                                    reason=None if found else "install my-agent")

            async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
                return [ModelInfo(id="small", label="Small", default=True)]

            async def create_session(self, config, sink, launcher) -> AgentSession:
                process = await launcher.launch(["my-agent"], cwd=config.cwd, env=config.env,
                                                provider=self.id, agent_id=config.agentId)
                return MySession(process, sink)

            async def resume_session(self, handle, config, sink, launcher) -> AgentSession:
                ...  # the same, continuing handle.sessionId

        @hookimpl
        def paseo_register_providers(register: ProviderRegistrar) -> None:
            register(MyProvider())
    """

    id: str
    """Stable provider id as stored in agent records (``^[a-z][a-z0-9-]*$``)."""

    label: str
    """Human-readable name."""

    @abstractmethod
    async def availability(self) -> Availability:
        """Whether sessions can start (e.g. ``unavailable`` when the program is not installed,
        with the reason saying what to install). Must not start a long-lived process."""

    @abstractmethod
    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        """The models this provider offers. ``launcher`` is there for a provider that must ask
        its program (Codex ``model/list``, an ACP probe session); one that knows its models
        ignores it, so the common case starts nothing. Cache what a process told you."""

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        """The modes this provider offers (none by default); ``launcher`` as for
        :meth:`list_models`."""
        return []

    async def list_features(
        self, draft: DraftConfig, launcher: ProcessLauncher
    ) -> list[AgentFeature]:
        """The features a new session started with ``draft`` would offer, with the values it
        would start with (``draft.featureValues`` applied); none by default. ``launcher`` as
        for :meth:`list_models` (contract 1.3)."""
        return []

    @abstractmethod
    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        """Start a new session, its program started with ``launcher``. Raises ``Unavailable``
        when the program is missing or fails to start, with a message that says what happened
        and what to do."""

    @abstractmethod
    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        """Reattach to the conversation named by ``handle`` (Claude ``--resume``, Codex
        ``thread/resume``, ACP ``session/load``), its program started with ``launcher``;
        ``NotFound`` when the conversation is gone (the kernel then starts a new one)."""

    def supports_no_tools(self) -> bool:
        """Whether this provider's sessions honour ``SessionConfig.noTools`` (guarantee that
        the program runs no tool). ``False`` by default: the kernel then runs no internal agent
        with this provider (contract 2.0)."""
        return False

    def terminal_profile(self) -> TerminalProfile | None:
        """The terminal profile that runs this provider's program interactively (listed among
        the default ``daemon.terminalProfiles`` while the user has set none), or ``None``.
        Use :data:`paseo_hookspecs.terminals.PROMPT_SENTINEL` where a typed prompt goes."""
        return None

    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        """A custom provider (``agents.providers.<id>`` with ``extends`` naming this one) that
        reports ``provider_id`` everywhere. Providers that support overrides (command, env,
        models, additionalModels, disallowedTools) override this."""
        from paseo_hookspecs.errors import InvalidParams

        raise InvalidParams(f"provider {self.id!r} cannot be extended")
