"""The chat rooms: create, list, inspect, delete, post, read, wait.

One process-wide lock orders every change, so ``rooms.json`` and a room's message file are
never written by two posts at once; waiters are woken by an :class:`asyncio.Condition`.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

from paseo_chat.mentions import CONTEXT_MESSAGES, MentionDispatcher, mention_tokens
from paseo_chat.models import (
    ChatMessage,
    ChatMessageNotFound,
    ChatRoom,
    ChatRoomNameTaken,
    ChatRoomNotFound,
    now_iso,
    parse_time,
)

if TYPE_CHECKING:
    from paseo_chat.store import ChatStore


class ChatService:
    def __init__(self, store: ChatStore, mentions: MentionDispatcher | None) -> None:
        self.store = store
        self.mentions = mentions
        self._rooms: dict[str, ChatRoom] = {room.id: room for room in store.load_rooms()}
        self._messages: dict[str, list[ChatMessage]] = {}
        self._lock = asyncio.Lock()
        self._posted = asyncio.Condition()

    # rooms

    def rooms(self) -> list[ChatRoom]:
        return sorted(self._rooms.values(), key=lambda room: room.createdAt)

    def find(self, ref: str) -> ChatRoom:
        """The room ``ref`` names: its id, else its name (case-insensitive)."""
        room = self._rooms.get(ref)
        if room is not None:
            return room
        folded = ref.casefold()
        for candidate in self._rooms.values():
            if candidate.name.casefold() == folded:
                return candidate
        raise ChatRoomNotFound(f"Chat room not found: {ref}")

    def is_member(self, room: ChatRoom, agent_id: str) -> bool:
        """Whether ``agent_id`` is in ``room``: it created the room through the MCP tools,
        posted in it, or was mentioned in it (invited) — within the kept history."""
        if room.createdByAgentId == agent_id:
            return True
        return any(
            m.authorAgentId == agent_id or agent_id in m.mentionAgentIds
            for m in self._history(room.id)
        )

    async def create(
        self, name: str, purpose: str | None, created_by: str | None = None
    ) -> ChatRoom:
        name = name.strip()
        async with self._lock:
            if any(r.name.casefold() == name.casefold() for r in self._rooms.values()):
                raise ChatRoomNameTaken(f"Chat room already exists with name: {name}")
            stamp = now_iso()
            room = ChatRoom(
                id=str(uuid.uuid4()),
                name=name,
                purpose=purpose,
                createdAt=stamp,
                updatedAt=stamp,
                createdByAgentId=created_by,
            )
            self.store.save_rooms([*self._rooms.values(), room])
            self._rooms[room.id] = room
            self._messages[room.id] = []
            return room

    async def delete(self, ref: str) -> ChatRoom:
        async with self._lock:
            room = self.find(ref)
            self.store.save_rooms([r for r in self._rooms.values() if r.id != room.id])
            del self._rooms[room.id]
            self._messages.pop(room.id, None)
            self.store.delete_messages(room.id)
        async with self._posted:
            self._posted.notify_all()  # a waiter on the room learns it is gone
        return room

    # messages

    def _history(self, room_id: str) -> list[ChatMessage]:
        history = self._messages.get(room_id)
        if history is None:
            history = self._messages[room_id] = self.store.load_messages(room_id)
        return history

    async def post(
        self, ref: str, body: str, author: str, reply_to: str | None = None
    ) -> ChatMessage:
        mentions = self.mentions
        depth = mentions.depth_of_post(author) if mentions else 0
        mention_ids = await mentions.resolve(mention_tokens(body)) if mentions else []
        async with self._lock:
            room = self.find(ref)
            history = self._history(room.id)
            if reply_to is not None and not any(m.id == reply_to for m in history):
                raise ChatMessageNotFound(f"Reply target not found: {reply_to}")
            stamp = now_iso()
            message = ChatMessage(
                id=str(uuid.uuid4()),
                roomId=room.id,
                authorAgentId=author,
                body=body,
                replyToMessageId=reply_to,
                mentionAgentIds=mention_ids,
                createdAt=stamp,
            )
            context = history[-CONTEXT_MESSAGES:]
            kept = self.store.save_messages(room.id, [*history, message])
            updated = room.model_copy(
                update={
                    "updatedAt": stamp,
                    "lastMessageAt": stamp,
                    "messageCount": room.messageCount + 1,
                }
            )
            rooms = {**self._rooms, room.id: updated}
            self.store.save_rooms(list(rooms.values()))
            self._rooms = rooms
            self._messages[room.id] = kept
        async with self._posted:
            self._posted.notify_all()
        if mentions is not None:
            await mentions.dispatch(updated, message, context, depth)
        return message

    def read(
        self,
        ref: str,
        *,
        limit: int,
        since: str | None = None,
        author: str | None = None,
        before: str | None = None,
    ) -> tuple[list[ChatMessage], bool]:
        """The newest ``limit`` matching messages, oldest first, and whether older ones match."""
        room = self.find(ref)
        history = self._history(room.id)
        if before is not None:
            index = next((i for i, m in enumerate(history) if m.id == before), None)
            if index is None:
                raise ChatMessageNotFound(f"Message not found: {before}")
            history = history[:index]
        if since is not None:
            after = parse_time(since)
            history = [m for m in history if parse_time(m.createdAt) > after]
        if author is not None:
            history = [m for m in history if m.authorAgentId == author]
        return history[-limit:], len(history) > limit

    async def wait(
        self,
        ref: str,
        after: str | None,
        timeout: float,  # noqa: ASYNC109
    ) -> tuple[list[ChatMessage], bool]:
        """Messages newer than ``after`` (default: the newest now) once there are any, or
        ``([], True)`` after ``timeout`` seconds."""
        room = self.find(ref)
        history = self._history(room.id)
        if after is None:
            mark = history[-1].id if history else None
        else:
            if not any(m.id == after for m in history):
                raise ChatMessageNotFound(f"Message not found: {after}")
            mark = after

        def newer() -> list[ChatMessage] | None:
            current = self._messages.get(room.id)
            if current is None:
                raise ChatRoomNotFound(f"Chat room not found: {ref}")
            if mark is None:
                return current[:] or None
            index = next((i for i, m in enumerate(current) if m.id == mark), -1)
            return current[index + 1 :] or None

        try:
            async with asyncio.timeout(timeout), self._posted:
                found = await self._posted.wait_for(newer)
        except TimeoutError:
            return [], True
        return found or [], False
