"""The ``chat.*`` RPC methods (docs/protocol.md, docs/chat.md).

``authorAgentId`` is what the client claims: the CLI sends its ``$PASEO_AGENT_ID`` (or
``manual``), and a caller holding the credential may claim any author. It is a label, as in
the TypeScript daemon, not an authenticated identity.

Imported by the group's first call: the plugin registers it from :data:`STUBS`
(:mod:`paseo_chat.plugin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo_chat.wire import (
    CreateParams,
    MessageResult,
    MessagesResult,
    PostParams,
    ReadParams,
    RoomParams,
    RoomResult,
    RoomsResult,
    WaitParams,
    WaitResult,
)

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo_chat.runtime import Runtime


def method_group(runtime: Runtime) -> RpcMethodGroup:
    async def create(ctx: RpcContext, params: Any) -> RoomResult:
        return RoomResult(room=await runtime.require().create(params.name, params.purpose))

    async def list_rooms(ctx: RpcContext, params: Any) -> RoomsResult:
        return RoomsResult(rooms=runtime.require().rooms())

    async def inspect(ctx: RpcContext, params: Any) -> RoomResult:
        return RoomResult(room=runtime.require().find(params.room))

    async def delete(ctx: RpcContext, params: Any) -> RoomResult:
        return RoomResult(room=await runtime.require().delete(params.room))

    async def post(ctx: RpcContext, params: Any) -> MessageResult:
        message = await runtime.require().post(
            params.room, params.body, params.authorAgentId, params.replyToMessageId
        )
        return MessageResult(message=message)

    async def read(ctx: RpcContext, params: Any) -> MessagesResult:
        messages, more = runtime.require().read(
            params.room,
            limit=params.limit,
            since=params.since,
            author=params.authorAgentId,
            before=params.beforeMessageId,
        )
        return MessagesResult(messages=messages, hasMore=more)

    async def wait(ctx: RpcContext, params: Any) -> WaitResult:
        messages, timed_out = await runtime.require().wait(
            params.room, params.afterMessageId, params.timeoutMs / 1000
        )
        return WaitResult(messages=messages, timedOut=timed_out)

    def method(name: str, handler: Any, params: Any, result: Any, summary: str) -> RpcMethod:
        return RpcMethod(f"chat.{name}", handler, params, result, summary)

    return RpcMethodGroup(
        area="chat",
        methods=[
            method("create", create, CreateParams, RoomResult, "Create a chat room"),
            method("list", list_rooms, None, RoomsResult, "Every chat room"),
            method("inspect", inspect, RoomParams, RoomResult, "One chat room (id or name)"),
            method("delete", delete, RoomParams, RoomResult, "Delete a room and its messages"),
            method(
                "post",
                post,
                PostParams,
                MessageResult,
                "Post a message; its @mentions prompt the agents they name",
            ),
            method(
                "read",
                read,
                ReadParams,
                MessagesResult,
                "A room's newest messages, oldest first (page back with beforeMessageId)",
            ),
            method(
                "wait",
                wait,
                WaitParams,
                WaitResult,
                "Wait for messages newer than afterMessageId (or than now)",
            ),
        ],
    )
