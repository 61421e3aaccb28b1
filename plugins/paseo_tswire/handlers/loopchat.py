"""``chat/<verb>`` → ``chat.<verb>`` and ``loop/<verb>`` → ``loop.<verb>`` (the chat and loops
plugins' RPC methods, whose records already carry the TypeScript field names).

As in the TypeScript daemon, a refusal is an ``rpc_error`` naming the request type, not a
``…/response`` with ``error`` set: the chat service's own codes (``chat_room_name_taken``,
``chat_room_not_found``, ``chat_message_not_found``) travel unchanged, any other chat refusal
is ``chat_request_failed``, and every loop refusal is ``loop_request_failed``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.models import loopchat as lc
from paseo_tswire.models.messages import RpcError
from paseo_tswire.models.wire import Wire

CHAT_CODES = frozenset({"chat_room_name_taken", "chat_room_not_found", "chat_message_not_found"})
CHAT_FAILED = "chat_request_failed"
LOOP_FAILED = "loop_request_failed"


def chat_code(failure: RpcFailure) -> str:
    """The TypeScript code of a refused ``chat.*`` call."""
    return failure.code if failure.code in CHAT_CODES else CHAT_FAILED


def _fields(model: BaseModel, names: tuple[str, ...]) -> dict[str, Any]:
    """The named fields the client sent (the plugins' own defaults apply to the others)."""
    return {n: getattr(model, n) for n in names if getattr(model, n) is not None}


def _pick(raw: dict[str, Any], model: type[Wire]) -> dict[str, Any]:
    """``raw`` narrowed to ``model``'s fields: a record's own bookkeeping (e.g. an iteration's
    ``rerunAfterRestart``) is not on the wire."""
    return {k: v for k, v in raw.items() if k in model.model_fields}


def log_entry(raw: dict[str, Any]) -> lc.LoopLogEntry:
    data = _pick(raw, lc.LoopLogEntry)
    # The TypeScript schema knows "info" and "error" only (records written before the loops
    # plugin kept to it say "warn"): a record holding another level is dropped whole.
    if data.get("level") != "info":
        data["level"] = "error"
    return lc.LoopLogEntry(**data)


def verify_check(raw: dict[str, Any]) -> lc.LoopVerifyCheck:
    data = _pick(raw, lc.LoopVerifyCheck)
    # A check killed at its time limit has no exit code here; the TypeScript schema requires
    # an integer.
    if data.get("exitCode") is None:
        data["exitCode"] = -1
    return lc.LoopVerifyCheck(**data)


def loop_record(raw: dict[str, Any]) -> lc.LoopRecord:
    data = _pick(raw, lc.LoopRecord)
    data["iterations"] = [
        lc.LoopIteration(
            **{
                **_pick(it, lc.LoopIteration),
                "verifyChecks": [verify_check(c) for c in it.get("verifyChecks") or []],
                "verifyPrompt": (
                    lc.LoopVerifyPrompt(**_pick(it["verifyPrompt"], lc.LoopVerifyPrompt))
                    if it.get("verifyPrompt")
                    else None
                ),
            }
        )
        for it in raw.get("iterations") or []
    ]
    data["logs"] = [log_entry(e) for e in raw.get("logs") or []]
    return lc.LoopRecord(**data)


def loop_item(raw: dict[str, Any]) -> lc.LoopListItem:
    return lc.LoopListItem(**_pick(raw, lc.LoopListItem))


def room(raw: dict[str, Any]) -> lc.ChatRoom:
    return lc.ChatRoom(**{"purpose": None, "lastMessageAt": None, **_pick(raw, lc.ChatRoom)})


def message(raw: dict[str, Any]) -> lc.ChatMessage:
    return lc.ChatMessage(
        **{"replyToMessageId": None, "mentionAgentIds": [], **_pick(raw, lc.ChatMessage)}
    )


async def _refuse(session: ClientSession, msg: Any, type_: str, exc: RpcFailure, code: str) -> None:
    await session.push(
        "rpc_error",
        RpcError(requestId=msg.requestId, requestType=type_, error=exc.message, code=code),
    )


async def _chat(session: ClientSession, msg: Any, verb: str, params: dict[str, Any]) -> Any:
    """``chat.<verb>``, or ``None`` after answering the refusal."""
    try:
        return await session.call(f"chat.{verb}", params)
    except RpcFailure as exc:
        await _refuse(session, msg, f"chat/{verb}", exc, chat_code(exc))
        return None


async def _loop(session: ClientSession, msg: Any, verb: str, params: dict[str, Any]) -> Any:
    """``loop.<verb>``, or ``None`` after answering the refusal."""
    try:
        return await session.call(f"loop.{verb}", params)
    except RpcFailure as exc:
        await _refuse(session, msg, f"loop/{verb}", exc, LOOP_FAILED)
        return None


# --- chat ---------------------------------------------------------------------------------


async def chat_create(session: ClientSession, msg: lc.ChatCreate) -> None:
    found = await _chat(session, msg, "create", _fields(msg, ("name", "purpose")))
    if found is not None:
        reply = lc.RoomReply(requestId=msg.requestId, room=room(found["room"]), error=None)
        await session.push("chat/create/response", reply)


async def chat_list(session: ClientSession, msg: lc.ChatList) -> None:
    found = await _chat(session, msg, "list", {})
    if found is not None:
        rooms = [room(r) for r in found.get("rooms") or []]
        await session.push(
            "chat/list/response", lc.RoomsReply(requestId=msg.requestId, rooms=rooms, error=None)
        )


async def _room_verb(session: ClientSession, msg: lc.ChatRoomRef, verb: str) -> None:
    found = await _chat(session, msg, verb, {"room": msg.room})
    if found is not None:
        reply = lc.RoomReply(requestId=msg.requestId, room=room(found["room"]), error=None)
        await session.push(f"chat/{verb}/response", reply)


async def chat_inspect(session: ClientSession, msg: lc.ChatRoomRef) -> None:
    await _room_verb(session, msg, "inspect")


async def chat_delete(session: ClientSession, msg: lc.ChatRoomRef) -> None:
    await _room_verb(session, msg, "delete")


async def chat_post(session: ClientSession, msg: lc.ChatPost) -> None:
    params = _fields(msg, ("room", "body", "authorAgentId", "replyToMessageId"))
    found = await _chat(session, msg, "post", params)
    if found is not None:
        reply = lc.PostReply(requestId=msg.requestId, message=message(found["message"]), error=None)
        await session.push("chat/post/response", reply)


async def chat_read(session: ClientSession, msg: lc.ChatRead) -> None:
    params = _fields(msg, ("room", "limit", "since", "authorAgentId"))
    found = await _chat(session, msg, "read", params)
    if found is not None:
        messages = [message(m) for m in found.get("messages") or []]
        reply = lc.ReadReply(requestId=msg.requestId, messages=messages, error=None)
        await session.push("chat/read/response", reply)


async def chat_wait(session: ClientSession, msg: lc.ChatWait) -> None:
    found = await _chat(session, msg, "wait", _fields(msg, ("room", "afterMessageId", "timeoutMs")))
    if found is not None:
        reply = lc.WaitReply(
            requestId=msg.requestId,
            messages=[message(m) for m in found.get("messages") or []],
            timedOut=bool(found.get("timedOut")),
            error=None,
        )
        await session.push("chat/wait/response", reply)


# --- loops --------------------------------------------------------------------------------

_RUN_FIELDS = (
    "prompt",
    "cwd",
    "provider",
    "model",
    "verifierProvider",
    "verifierModel",
    "verifyPrompt",
    "verifyChecks",
    "name",
    "sleepMs",
    "maxIterations",
    "maxTimeMs",
)


async def loop_run(session: ClientSession, msg: lc.LoopRun) -> None:
    found = await _loop(session, msg, "run", _fields(msg, _RUN_FIELDS))
    if found is not None:
        reply = lc.LoopReply(requestId=msg.requestId, loop=loop_record(found["loop"]), error=None)
        await session.push("loop/run/response", reply)


async def loop_list(session: ClientSession, msg: lc.LoopList) -> None:
    found = await _loop(session, msg, "list", {})
    if found is not None:
        loops = [loop_item(r) for r in found.get("loops") or []]
        await session.push(
            "loop/list/response", lc.LoopListReply(requestId=msg.requestId, loops=loops, error=None)
        )


async def _loop_verb(session: ClientSession, msg: lc.LoopRef, verb: str) -> None:
    found = await _loop(session, msg, verb, {"id": msg.id})
    if found is not None:
        reply = lc.LoopReply(requestId=msg.requestId, loop=loop_record(found["loop"]), error=None)
        await session.push(f"loop/{verb}/response", reply)


async def loop_inspect(session: ClientSession, msg: lc.LoopRef) -> None:
    await _loop_verb(session, msg, "inspect")


async def loop_stop(session: ClientSession, msg: lc.LoopRef) -> None:
    await _loop_verb(session, msg, "stop")


async def loop_logs(session: ClientSession, msg: lc.LoopLogs) -> None:
    found = await _loop(session, msg, "logs", {"id": msg.id, "afterSeq": msg.afterSeq or 0})
    if found is not None:
        reply = lc.LoopLogsReply(
            requestId=msg.requestId,
            loop=loop_record(found["loop"]),
            entries=[log_entry(e) for e in found["entries"]],
            nextCursor=int(found["nextSeq"]),
            error=None,
        )
        await session.push("loop/logs/response", reply)
