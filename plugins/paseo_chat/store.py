"""Durable chat files: ``chat/rooms.json`` (every room) and ``chat/messages/<roomId>.json``.

Every write is atomic (:mod:`paseo_hookspecs.atomic`), so a crash leaves the old file or the
new one. A room keeps its newest :data:`HISTORY_LIMIT` messages: older ones are dropped when
a post would exceed it (``messageCount`` counts every message ever posted).
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

from paseo_hookspecs.atomic import atomic_write_json, read_json, sweep_temp_files

from paseo_chat.models import ChatMessage, ChatRoom

log = logging.getLogger("paseo.chat")

HISTORY_LIMIT = 2000
"""Messages kept per room (the newest)."""


class ChatStore:
    def __init__(self, home: Path) -> None:
        self.root = home / "chat"
        self.messages_dir = self.root / "messages"
        self.rooms_file = self.root / "rooms.json"
        self.messages_dir.mkdir(parents=True, exist_ok=True)
        sweep_temp_files(self.root)
        sweep_temp_files(self.messages_dir)

    def load_rooms(self) -> list[ChatRoom]:
        document = self._read(self.rooms_file)
        rows = document.get("rooms") if isinstance(document, dict) else document
        rooms = []
        for row in rows if isinstance(rows, list) else []:
            try:
                rooms.append(ChatRoom.model_validate(row))
            except ValueError:
                log.warning("chat: skipping an unreadable room in %s", self.rooms_file)
        return rooms

    def save_rooms(self, rooms: list[ChatRoom]) -> None:
        atomic_write_json(self.rooms_file, {"rooms": [r.model_dump(mode="json") for r in rooms]})

    def load_messages(self, room_id: str) -> list[ChatMessage]:
        document = self._read(self._messages_file(room_id))
        rows = document.get("messages") if isinstance(document, dict) else None
        messages = []
        for row in rows if isinstance(rows, list) else []:
            try:
                messages.append(ChatMessage.model_validate(row))
            except ValueError:
                log.warning("chat: skipping an unreadable message of room %s", room_id)
        return messages

    def save_messages(self, room_id: str, messages: list[ChatMessage]) -> list[ChatMessage]:
        kept = messages[-HISTORY_LIMIT:]
        document = {"messages": [m.model_dump(mode="json") for m in kept]}
        atomic_write_json(self._messages_file(room_id), document)
        return kept

    def delete_messages(self, room_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._messages_file(room_id).unlink()

    def _messages_file(self, room_id: str) -> Path:
        # Room ids are uuids the service made; the name check keeps a hand-edited rooms.json
        # from pointing a path outside the folder.
        if not room_id or "/" in room_id or room_id.startswith("."):
            raise ValueError(f"bad room id {room_id!r}")
        return self.messages_dir / f"{room_id}.json"

    def _read(self, path: Path) -> Any:
        try:
            return read_json(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            log.warning("chat: %s is unreadable; starting it empty", path)
            return None
