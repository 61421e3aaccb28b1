"""``@mentions``: who a post names, and prompting them within the storm bounds.

A mentioned agent that is idle is prompted at once with the message and the room's recent
messages; one running a turn gets the prompt after that turn (queued, its turn is never
replaced). Two bounds stop agents mentioning each other without end:

- **depth**: a person's post has depth 0 and the prompts it causes depth 1; a post an agent
  makes while running a turn that a mention of depth ``d`` started has depth ``d`` (it
  inherits the chain), so the prompts it causes have depth ``d + 1``. A prompt deeper than
  :data:`MAX_DEPTH` is not sent.
- **rate**: at most :data:`ROOM_RATE` mention prompts per room in any :data:`RATE_WINDOW`
  seconds; mentions beyond it are not sent.

Both are logged when they drop a prompt; the message itself is always posted.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import deque
from dataclasses import dataclass

from paseo_hookspecs.agents import AgentObserver, Agents, RecordChange
from paseo_hookspecs.errors import PaseoError

from paseo_chat.models import ChatMessage, ChatRoom, now_iso

log = logging.getLogger("paseo.chat")

MAX_DEPTH = 3
"""Deepest mention chain that still prompts (person → agent → agent → agent)."""
ROOM_RATE = 20
"""Mention prompts one room may cause per :data:`RATE_WINDOW`."""
RATE_WINDOW = 60.0
CONTEXT_MESSAGES = 10
"""Recent messages of the room quoted in a mention prompt."""
EVERYONE = "everyone"
MIN_PREFIX = 6
"""Shortest id prefix taken as a mention (an id or an exact title always is)."""

_TOKEN = re.compile(r"(?<![\w@])@([\w][\w.\-]*)")


def mention_tokens(body: str) -> list[str]:
    """The ``@token`` words of ``body``, in order, once each (trailing dots dropped)."""
    seen: list[str] = []
    for match in _TOKEN.finditer(body):
        token = match.group(1).rstrip(".-")
        if token and token not in seen:
            seen.append(token)
    return seen


def mention_prompt(room: ChatRoom, message: ChatMessage, context: list[ChatMessage]) -> str:
    lines = [
        f'Chat mention from {message.authorAgentId} in room "{room.name}":',
        message.body,
        "",
    ]
    if context:
        lines.append(f'Recent messages in "{room.name}" (oldest first):')
        lines += [f"- {m.authorAgentId} ({m.createdAt}): {m.body}" for m in context]
        lines.append("")
    lines.append(
        f'Reply in the room with: paseo chat post {room.id} "<your reply>" --reply-to {message.id}'
    )
    return "\n".join(lines)


@dataclass
class _Prompt:
    text: str
    depth: int
    message_id: str


class MentionDispatcher(AgentObserver):
    """Sends mention prompts and remembers which turn a mention started (for its depth)."""

    def __init__(self, agents: Agents) -> None:
        self.agents = agents
        self._turn_depth: dict[str, int] = {}
        self._queued: dict[str, deque[_Prompt]] = {}
        self._sent: dict[str, str] = {}
        """Agents prompted whose turn has not been seen running yet, with when (ISO)."""
        self._running: set[str] = set()
        self._rate: dict[str, deque[float]] = {}
        self._lock = asyncio.Lock()

    def depth_of_post(self, author: str) -> int:
        """The chain depth of a post by ``author`` now: that of the mention that started the
        turn it is running, else 0."""
        return self._turn_depth.get(author, 0)

    async def resolve(self, tokens: list[str]) -> list[str]:
        """Agent ids for the tokens that name an agent (id, unique id prefix or title);
        ``everyone`` is kept as it is; other tokens are ordinary words."""
        ids: list[str] = []
        for token in tokens:
            if token == EVERYONE:
                found = EVERYONE
            else:
                try:
                    record = await self.agents.get(token)
                except PaseoError:
                    continue
                if token not in (record.id, record.title) and len(token) < MIN_PREFIX:
                    continue  # "@ab" in prose is a word, not a one-in-a-few-agents id prefix
                found = record.id
            if found not in ids:
                ids.append(found)
        return ids

    async def dispatch(
        self, room: ChatRoom, message: ChatMessage, context: list[ChatMessage], depth: int
    ) -> None:
        """Prompt each agent ``message`` mentions (never its author), within the bounds."""
        targets = [a for a in message.mentionAgentIds if a not in (EVERYONE, message.authorAgentId)]
        if not targets:
            return
        if depth + 1 > MAX_DEPTH:
            log.info("chat: room %s: mention chain depth %d reached, no prompt", room.id, depth)
            return
        text = mention_prompt(room, message, context)
        for agent_id in targets:
            if not self._take_rate(room.id):
                log.info(
                    "chat: room %s: mention rate limit reached, %s not prompted", room.id, agent_id
                )
                return
            await self._deliver(agent_id, _Prompt(text, depth + 1, message.id))

    def _take_rate(self, room_id: str) -> bool:
        now = time.monotonic()
        stamps = self._rate.setdefault(room_id, deque())
        while stamps and now - stamps[0] > RATE_WINDOW:
            stamps.popleft()
        if len(stamps) >= ROOM_RATE:
            return False
        stamps.append(now)
        return True

    async def _deliver(self, agent_id: str, prompt: _Prompt) -> None:
        async with self._lock:
            try:
                record = await self.agents.get(agent_id)
            except PaseoError:
                return
            if record.archivedAt or record.deletedAt:
                return
            busy = agent_id in self._running or agent_id in self._sent
            if record.lastStatus == "running" or busy:
                self._queued.setdefault(agent_id, deque()).append(prompt)
                return
            await self._send(agent_id, prompt)

    async def _send(self, agent_id: str, prompt: _Prompt) -> None:
        self._turn_depth[agent_id] = prompt.depth
        self._sent[agent_id] = now_iso()
        try:
            sent = await self.agents.send(
                agent_id, prompt.text, message_id=f"chat-{prompt.message_id}"
            )
        except PaseoError as exc:
            sent = None
            log.warning("chat: could not prompt agent %s: %s", agent_id, exc)
        if sent is None or not sent.accepted:
            # No turn starts: nothing will end it, so nothing may wait for its end.
            self._sent.pop(agent_id, None)
            self._turn_depth.pop(agent_id, None)

    async def on_record(self, change: RecordChange) -> None:
        record = change.record
        agent_id = record.id
        if change.kind == "deleted":
            self._forget(agent_id)
            return
        if record.lastStatus == "running":
            self._sent.pop(agent_id, None)
            self._running.add(agent_id)
            return
        sent_at = self._sent.get(agent_id)
        failed = record.lastStatus in ("error", "closed")
        if sent_at is not None and failed and record.updatedAt >= sent_at:
            # The prompt failed to start a turn: end it here, or its queue would wait for ever.
            self._running.add(agent_id)
            self._sent.pop(agent_id, None)
        if agent_id not in self._running:
            # Idle and not seen running since the prompt: a change from before the send (an
            # idle change that follows the prompt's recording comes before ``running``).
            return
        # The turn a mention (or anything else) started has ended: its chain ends with it,
        # and the next queued mention, if any, starts the next turn.
        async with self._lock:
            self._running.discard(agent_id)
            self._turn_depth.pop(agent_id, None)
            queue = self._queued.get(agent_id)
            if queue:
                await self._send(agent_id, queue.popleft())

    def _forget(self, agent_id: str) -> None:
        self._sent.pop(agent_id, None)
        self._running.discard(agent_id)
        self._turn_depth.pop(agent_id, None)
        self._queued.pop(agent_id, None)
