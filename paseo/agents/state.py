"""The live state of one agent as a state machine: the one owner of what the daemon keeps in
memory about an agent's prompts, turns, permission requests, session and reply.

The other agent modules do I/O (the session keeper starts programs, the runner hands prompts
to them, the roster makes entries durable) and tell this machine what happened through its
transition methods; they read its state through properties and never write its fields. It does
no I/O itself, so every transition is unit-tested on its own (``tests/unit/agents/test_state``).

Turn bookkeeping: ``latest_prompt`` is the message id of the newest prompt a client sent,
``provider_prompt`` the one the provider is running. A terminal event ends the agent's run only
when ``provider_prompt == latest_prompt`` (see :mod:`paseo.agents.ingest`), so the end of a run
being replaced never makes a waiter think the new run is over. A turn the kernel ends itself
(an interrupt before the prompt reached the program, a start that failed, a close, a restart)
is first made the newest prompt's (:meth:`AgentState.end_newest`).

The durable status (``lastStatus`` of the record) is written by the roster from the record
changes ingest derives; :meth:`AgentState.phase` combines it with what only memory knows (a
queued prompt, a pending request, a deletion) into where the agent is::

    closed --session opened--> idle --prompt queued--> running --request--> permission
       ^                        ^  \\                    |   ^                    |
       |                        |   `---- turn ends ----'   `----- answered -----'
       `--- session closed -----+-- turn failed --> error --prompt queued--> running
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.interfaces.agent import AgentSession, PromptImage

from paseo.agents.ingest import Effects, Reply

SEEN_MESSAGES = 1000
"""Client message ids remembered per agent for de-duplication."""

Phase = Literal["starting", "idle", "running", "permission", "error", "closed", "deleted"]
"""Where an agent is (:meth:`AgentState.phase`)."""

Outcome = Literal["idle", "permission", "error", "closed"]
"""How a wait on an agent ends (:meth:`AgentState.outcome`)."""

_WORKING = ("running", "initializing")
_RESTING: dict[str, Literal["idle", "error", "closed"]] = {
    "idle": "idle",
    "error": "error",
    "closed": "closed",
}


class AgentState:
    """See the module docstring. ``status`` arguments are the record's ``lastStatus``."""

    __slots__ = (
        "_deleted",
        "_generation",
        "_images",
        "_latest_prompt",
        "_latest_text",
        "_pending",
        "_provider_prompt",
        "_queued",
        "_reply",
        "_reply_loaded",
        "_resolved",
        "_seen",
        "_seen_loaded",
        "_session",
        "_session_wanted",
    )

    def __init__(self) -> None:
        self._session: AgentSession | None = None
        self._generation = 0
        self._queued: tuple[str, str] | None = None
        self._images: dict[str, list[PromptImage]] = {}
        self._session_wanted = False
        self._latest_prompt: str | None = None
        self._latest_text: str | None = None
        self._provider_prompt: str | None = None
        self._pending: dict[str, PermissionRequest] = {}
        self._resolved: set[str] = set()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._seen_loaded = False
        self._reply = Reply()
        self._reply_loaded = False
        self._deleted = False

    # ================================================================ reads

    @property
    def session(self) -> AgentSession | None:
        """The live provider session."""
        return self._session

    @property
    def generation(self) -> int:
        """Bumped whenever a session starts or is dropped: events of older ones are ignored."""
        return self._generation

    @property
    def next_prompt(self) -> tuple[str, str] | None:
        """``(text, messageId)`` of the queued prompt, not yet handed to the provider."""
        return self._queued

    @property
    def latest_prompt(self) -> str | None:
        """Message id of the newest prompt a client sent."""
        return self._latest_prompt

    @property
    def latest_text(self) -> str | None:
        return self._latest_text

    @property
    def provider_prompt(self) -> str | None:
        """Message id of the prompt the provider is running."""
        return self._provider_prompt

    @property
    def pending(self) -> Mapping[str, PermissionRequest]:
        """The permission requests waiting for an answer, by id."""
        return self._pending

    @property
    def resolved(self) -> Collection[str]:
        """Permission requests a client answered (announced by the kernel)."""
        return self._resolved

    @property
    def seen(self) -> Collection[str]:
        """Client message ids already recorded (the newest :data:`SEEN_MESSAGES`)."""
        return self._seen

    @property
    def current_reply(self) -> Reply:
        return self._reply

    @property
    def deleted(self) -> bool:
        return self._deleted

    @property
    def busy(self) -> bool:
        """A prompt is queued or running in the provider."""
        return self._queued is not None or self._provider_prompt is not None

    @property
    def replacing(self) -> bool:
        """A queued prompt waits for the provider's running turn to end."""
        return self._queued is not None and self._provider_prompt is not None

    @property
    def quiet(self) -> bool:
        """Nothing lives only here: no session, prompt, session wanted, request or deletion."""
        return (
            self._session is None
            and not self.busy
            and not self._session_wanted
            and not self._pending
            and not self._deleted
        )

    def current(self, generation: int) -> bool:
        """Whether events of the session started as ``generation`` still count."""
        return self._generation == generation and not self._deleted

    def phase(self, status: str) -> Phase:
        """Where the agent is, given its durable ``status``."""
        if self._deleted:
            return "deleted"
        if self._pending:
            return "permission"
        if self.busy or status == "running":
            return "running"
        if status == "initializing":
            return "starting"
        return _RESTING.get(status, "closed")

    def outcome(self, status: str) -> Outcome | None:
        """How a wait ends now, given the durable ``status``; ``None`` while the agent works."""
        if self._deleted:
            return "closed"
        if self._pending:
            return "permission"
        if status in _WORKING or self.busy:
            return None
        return _RESTING.get(status)

    # ================================================================ prompts

    def queue_prompt(
        self, text: str, message_id: str, images: list[PromptImage] | None = None
    ) -> bool:
        """A client sent a prompt: it becomes the newest and replaces any queued one (with its
        images). ``False`` (nothing changes) for a message id already seen."""
        if message_id in self._seen:
            return False
        self.remember(message_id)
        self._latest_prompt = message_id
        self._latest_text = text
        self._queued = (text, message_id)
        # Only the queued prompt's images are kept: a replaced prompt's go with it.
        self._images = {message_id: list(images)} if images else {}
        return True

    def want_session(self) -> None:
        """Start the session without a prompt (an agent created without one)."""
        self._session_wanted = True

    def take_work(self) -> bool:
        """The runner's next step: whether there is a prompt to run or a session to start
        (the wish for a session is taken)."""
        if self._deleted or (self._queued is None and not self._session_wanted):
            return False
        self._session_wanted = False
        return True

    def take_queued(self) -> tuple[str, str] | None:
        """The queued prompt, now on its way to the provider."""
        queued, self._queued = self._queued, None
        return queued

    def drop_queued(self) -> bool:
        """Forget the queued prompt; returns whether there was one."""
        dropped = self._queued is not None
        self._queued = None
        return dropped

    def cancel_work(self) -> bool:
        """Stop everything not yet in the provider (queued prompt, wanted session); returns
        whether a prompt was queued or running."""
        in_flight = self.busy
        self._queued = None
        self._session_wanted = False
        return in_flight

    # ================================================================ turns

    def prompt_started(self, message_id: str) -> list[PromptImage] | None:
        """The prompt ``message_id`` is being handed to the provider; returns its images."""
        self._provider_prompt = message_id
        return self._images.get(message_id)

    def prompt_delivered(self, message_id: str) -> None:
        """The provider took the prompt: its images are not needed any more."""
        self._images.pop(message_id, None)

    def turn_abandoned(self) -> None:
        """The provider runs no prompt of ours (it refused one, died, or its session went)."""
        self._provider_prompt = None

    def interrupting(self) -> None:
        """An interrupt of the provider's running turn: that run is now the one whose end
        settles the agent (a prompt replacing it was dropped)."""
        self._latest_prompt = self._provider_prompt

    def end_newest(self) -> None:
        """A terminal event the kernel makes itself follows: it ends the newest prompt."""
        self._provider_prompt = self._latest_prompt

    def apply(self, effects: Effects) -> list[str]:
        """A durable event's effects on the live state (see :func:`paseo.agents.ingest.apply`);
        returns the pending requests a turn's end withdrew."""
        withdrawn: list[str] = []
        if effects.turn_ended:
            self._provider_prompt = None
            withdrawn = list(self._pending)
            self._pending.clear()
        if effects.requested is not None:
            self._pending[effects.requested.id] = effects.requested
        if effects.answered is not None:
            self._pending.pop(effects.answered, None)
        if effects.reply is not None:
            self._reply = effects.reply
            self._reply_loaded = True
        return withdrawn

    # ================================================================ permissions

    def take_request(self, request_id: str) -> PermissionRequest | None:
        """A client answers ``request_id``: no longer pending (``None``: it was not)."""
        return self._pending.pop(request_id, None)

    def answering(self, request_id: str) -> None:
        """The answer to ``request_id`` goes to the provider: its own announcement of it is
        an echo (the kernel announces it)."""
        self._resolved.add(request_id)

    def answer_failed(self, request: PermissionRequest) -> None:
        """The provider did not take the answer: the request is pending again."""
        self._resolved.discard(request.id)
        self._pending[request.id] = request

    def requests_dropped(self) -> list[str]:
        """The session is gone: nothing can answer its requests; returns their ids."""
        dropped = list(self._pending)
        self._pending.clear()
        return dropped

    # ================================================================ sessions

    def session_starting(self) -> int:
        """A session is being started; returns the generation its events carry."""
        self._generation += 1
        return self._generation

    def session_opened(self, session: AgentSession) -> None:
        self._session = session

    def session_closed(self) -> AgentSession | None:
        """The session is dropped (its late events are ignored); returns it to be closed."""
        session, self._session = self._session, None
        self._generation += 1
        return session

    def delete(self) -> None:
        """The agent went to the trash: nothing of it runs or is recorded any more."""
        self._deleted = True

    # ================================================================ what a restart rebuilds

    def remember(self, message_id: str) -> None:
        """``message_id`` was sent (the oldest of more than :data:`SEEN_MESSAGES` is forgotten)."""
        self._seen[message_id] = None
        while len(self._seen) > SEEN_MESSAGES:
            self._seen.popitem(last=False)

    def claim_seen_load(self) -> bool:
        """Whether the sent message ids still have to be read back from the timeline (once:
        the first caller reads them)."""
        if self._seen_loaded:
            return False
        self._seen_loaded = True
        return True

    def claim_reply_load(self) -> bool:
        """Whether the newest reply still has to be rebuilt from the timeline (once)."""
        if self._reply_loaded:
            return False
        self._reply_loaded = True
        return True

    def reply_rebuilt(self, reply: Reply) -> None:
        self._reply = reply

    def seen_rebuilt(self, message_ids: Iterable[str]) -> None:
        for message_id in message_ids:
            self.remember(message_id)
