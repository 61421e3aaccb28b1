"""The chat records and the ``chat.*`` parameters, with the TypeScript daemon's field names."""

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


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class CreateParams(_Params):
    name: str = Field(min_length=1, max_length=200)
    purpose: str | None = Field(default=None, max_length=2000)


class RoomParams(_Params):
    room: str = Field(min_length=1, max_length=200, description="the room's id or name")


class PostParams(RoomParams):
    body: str = Field(min_length=1, max_length=BODY_LIMIT)
    authorAgentId: str = Field(
        default=MANUAL,
        min_length=1,
        max_length=200,
        description="who posts: an agent id, or `manual` for a person (a label the client "
        "claims, not an authenticated identity)",
    )
    replyToMessageId: str | None = Field(default=None, max_length=200)


class ReadParams(RoomParams):
    limit: int = Field(default=50, ge=1, le=500)
    since: str | None = Field(default=None, description="only messages created after this time")
    authorAgentId: str | None = Field(default=None, description="only this author's messages")
    beforeMessageId: str | None = Field(
        default=None, description="page back: only messages older than this one"
    )


class WaitParams(RoomParams):
    afterMessageId: str | None = Field(
        default=None, description="return messages after this one (default: after the newest)"
    )
    timeoutMs: int = Field(default=30_000, ge=0, le=3_600_000)


class _Result(BaseModel):
    # Built on the first answer: an empty daemon's start (no chat call yet) builds none.
    model_config = ConfigDict(defer_build=True)


class RoomResult(_Result):
    room: ChatRoom


class RoomsResult(_Result):
    rooms: list[ChatRoom]


class MessageResult(_Result):
    message: ChatMessage


class MessagesResult(_Result):
    messages: list[ChatMessage]
    hasMore: bool = False


class WaitResult(_Result):
    messages: list[ChatMessage]
    timedOut: bool


def parse_time(text: str) -> datetime:
    """An ISO 8601 instant (``Z`` or an offset); ``InvalidParams`` otherwise."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidParams(f"not an ISO 8601 time: {text!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
