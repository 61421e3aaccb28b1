"""The chat records, with the TypeScript daemon's field names (the ``chat.*`` params and results
are in :mod:`paseo_chat.wire`, imported by the first call)."""

from __future__ import annotations

from datetime import UTC, datetime

from paseo_hookspecs.errors import InvalidParams, NotFound
from pydantic import BaseModel, ConfigDict, Field

MANUAL = "manual"
"""The author of a post made by a person (no ``$PASEO_AGENT_ID``)."""
BODY_LIMIT = 20_000
"""Longest message body accepted: a chat line, not a file transfer."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ChatRoomNameTaken(InvalidParams):
    code = "chat_room_name_taken"


class ChatRoomNotFound(NotFound):
    code = "chat_room_not_found"


class ChatMessageNotFound(NotFound):
    code = "chat_message_not_found"


class ChatRoom(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    id: str
    name: str
    purpose: str | None = None
    createdAt: str
    updatedAt: str
    messageCount: int = 0
    lastMessageAt: str | None = None
    createdByAgentId: str | None = None
    """The agent that created the room through the MCP tools (``None``: a person, or a
    client, did); a Paseo for Python addition, which makes it a member of the room."""


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    id: str
    roomId: str
    authorAgentId: str
    body: str
    replyToMessageId: str | None = None
    mentionAgentIds: list[str] = Field(default_factory=list)
    createdAt: str


def parse_time(text: str) -> datetime:
    """An ISO 8601 instant (``Z`` or an offset); ``InvalidParams`` otherwise."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidParams(f"not an ISO 8601 time: {text!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
