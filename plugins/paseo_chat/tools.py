"""The chat tools agents are offered through the MCP server (``paseo_register_mcp_tools``).

Arguments take the ``chat/*`` wire's names (``room``, ``body``, ``replyToMessageId``,
``limit``, ``since``, ``authorAgentId``, ``afterMessageId``, ``timeoutMs``); answers are the
``chat.*`` methods'. Unlike the CLI, whose author is a label the client claims, a tool's
author is the calling agent, identified by its token: there is no author argument.

Least privilege: an agent sees and uses only the rooms it is in — it created the room with
``chat_create``, posted in it, or was mentioned in it (a person or a member invited it). A
post may mention (and so prompt) only agents already in the room or agents the caller reaches
(its children, or more as ``callerScope`` allows): an agent cannot pull a stranger into a
room. A wait lasts at most :data:`WAIT_LIMIT_MS` per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import AccessDenied
from paseo_hookspecs.mcp_tools import McpTool, McpToolScope
from pydantic import BaseModel, ConfigDict, Field

from paseo_chat.mentions import EVERYONE, mention_tokens
from paseo_chat.models import BODY_LIMIT, ChatRoom, ChatRoomNotFound
from paseo_chat.wire import MessageResult, MessagesResult, RoomResult, RoomsResult, WaitResult

if TYPE_CHECKING:
    from paseo_chat.runtime import Runtime
    from paseo_chat.service import ChatService

WAIT_LIMIT_MS = 30_000
"""Longest ``chat_wait``: an MCP call that outlives the agent program's tool timeout is lost."""


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class NoInput(_Input):
    pass


class CreateInput(_Input):
    name: str = Field(min_length=1, max_length=200, description="unique, case-insensitively")
    purpose: str | None = Field(default=None, max_length=2000)


class RoomInput(_Input):
    room: str = Field(min_length=1, max_length=200, description="the room's id or name")


class PostInput(RoomInput):
    body: str = Field(
        min_length=1,
        max_length=BODY_LIMIT,
        description="the message; @<agent id or title> prompts that agent (one in the room "
        "or one you reach)",
    )
    replyToMessageId: str | None = Field(default=None, max_length=200)


class ReadInput(RoomInput):
    limit: int = Field(default=50, ge=1, le=500)
    since: str | None = Field(default=None, description="only messages after this ISO time")
    authorAgentId: str | None = Field(default=None, description="only this author's messages")
    beforeMessageId: str | None = Field(
        default=None, description="page back: only messages older than this one"
    )


class WaitInput(RoomInput):
    afterMessageId: str | None = Field(
        default=None, description="messages after this one (default: after the newest)"
    )
    timeoutMs: int = Field(default=WAIT_LIMIT_MS, ge=0, le=WAIT_LIMIT_MS)


def _dump(model: BaseModel) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json")
    return data


def _room_in(service: ChatService, scope: McpToolScope, reference: str) -> ChatRoom:
    room = service.find(reference)
    if not service.is_member(room, scope.caller.agent_id):
        raise AccessDenied(
            f"you are not in chat room {room.name!r}: you are in a room you created, posted "
            "in or were mentioned in"
        )
    return room


async def _check_mentions(
    service: ChatService, scope: McpToolScope, room: ChatRoom, body: str
) -> None:
    mentions = service.mentions
    if mentions is None:
        return
    for agent_id in await mentions.resolve(mention_tokens(body)):
        if agent_id in (EVERYONE, scope.caller.agent_id) or service.is_member(room, agent_id):
            continue
        if not await scope.reaches(agent_id):
            raise AccessDenied(
                f"agent {agent_id} is not in room {room.name!r} and you do not reach it: "
                "you may mention the room's members and the agents you created"
            )


def tools(runtime: Runtime) -> list[McpTool]:
    async def chat_create(scope: McpToolScope, args: CreateInput) -> dict[str, Any]:
        room = await runtime.require().create(args.name, args.purpose, scope.caller.agent_id)
        return _dump(RoomResult(room=room))

    async def chat_list(scope: McpToolScope, args: NoInput) -> dict[str, Any]:
        service = runtime.require()
        mine = [r for r in service.rooms() if service.is_member(r, scope.caller.agent_id)]
        return _dump(RoomsResult(rooms=mine))

    async def chat_inspect(scope: McpToolScope, args: RoomInput) -> dict[str, Any]:
        return _dump(RoomResult(room=_room_in(runtime.require(), scope, args.room)))

    async def chat_post(scope: McpToolScope, args: PostInput) -> dict[str, Any]:
        service = runtime.require()
        room = _room_in(service, scope, args.room)
        await _check_mentions(service, scope, room, args.body)
        message = await service.post(
            room.id, args.body, scope.caller.agent_id, args.replyToMessageId
        )
        return _dump(MessageResult(message=message))

    async def chat_read(scope: McpToolScope, args: ReadInput) -> dict[str, Any]:
        service = runtime.require()
        room = _room_in(service, scope, args.room)
        messages, more = service.read(
            room.id,
            limit=args.limit,
            since=args.since,
            author=args.authorAgentId,
            before=args.beforeMessageId,
        )
        return _dump(MessagesResult(messages=messages, hasMore=more))

    async def chat_wait(scope: McpToolScope, args: WaitInput) -> dict[str, Any]:
        service = runtime.require()
        room = _room_in(service, scope, args.room)
        try:
            messages, timed_out = await service.wait(
                room.id, args.afterMessageId, args.timeoutMs / 1000
            )
        except ChatRoomNotFound:
            raise ChatRoomNotFound(f"Chat room not found: {args.room} (it was deleted)") from None
        return _dump(WaitResult(messages=messages, timedOut=timed_out))

    return [
        McpTool(
            "chat_create",
            "Create a chat room (you are in it); post in it and mention agents to bring them in.",
            CreateInput,
            chat_create,
        ),
        McpTool(
            "chat_list",
            "The chat rooms you are in (created, posted in or mentioned in).",
            NoInput,
            chat_list,
        ),
        McpTool("chat_inspect", "One chat room you are in.", RoomInput, chat_inspect),
        McpTool(
            "chat_post",
            "Post a message in a room you are in, as yourself; @<agent> prompts that agent.",
            PostInput,
            chat_post,
        ),
        McpTool(
            "chat_read",
            "A room's newest messages, oldest first (page back with beforeMessageId).",
            ReadInput,
            chat_read,
        ),
        McpTool(
            "chat_wait",
            "Wait (at most 30 s per call) for messages newer than afterMessageId (or now).",
            WaitInput,
            chat_wait,
        ),
    ]
