"""The ``chat.*`` params and results, with the TypeScript daemon's field names.

Apart from the records (:mod:`paseo_chat.models`), which the service reads at start: these are
imported with the ``chat`` group, on its first call, or with the MCP tools.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from paseo_chat.models import BODY_LIMIT, MANUAL, ChatMessage, ChatRoom


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
