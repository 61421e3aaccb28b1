"""A small TypeScript-protocol client written from the reference (docs/ts-clients.md and the
TypeScript ``DaemonClient``): envelope, hello, correlated requests, pushes.

Every frame it receives is validated against the transport's strict outbound models
(:func:`paseo_tswire.envelope.validate_outbound`), so a test fails on any shape the real
clients would drop silently.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from collections.abc import Callable
from typing import Any

from paseo_tswire.envelope import validate_outbound
from websockets.sync.client import ClientConnection, connect, unix_connect

DEFAULT_TIMEOUT = 30.0
SNAPSHOT = b"\x04"
FILE_BEGIN = b"\x10"
"""The file-transfer FileBegin opcode (``binary-frames/file-transfer.ts``)."""

FRAME_LOG = os.environ.get("TSWIRE_FRAME_LOG")
"""When set, every frame received is appended to this JSON-lines file, so the frames can be
checked against the TypeScript clients' own zod schemas while developing (docs/ts-clients.md,
"Tests")."""


def _record(kind: str, frame: Any) -> None:
    if FRAME_LOG:
        with open(FRAME_LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"kind": kind, "frame": frame}) + "\n")


class TsClient:
    """One connection; ``frames`` keeps every validated frame received, in order."""

    def __init__(
        self,
        *,
        socket_path: str | None = None,
        uri: str | None = None,
        subprotocols: list[str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        protocols: Any = subprotocols
        self._stack = contextlib.ExitStack()
        if socket_path is not None:
            opening: Any = unix_connect(
                socket_path, "ws://localhost/ws", subprotocols=protocols, open_timeout=10
            )
        else:
            assert uri is not None
            opening = connect(
                uri, subprotocols=protocols, additional_headers=headers, open_timeout=10
            )
        self.ws: ClientConnection = self._stack.enter_context(opening)
        self.frames: list[dict[str, Any]] = []
        self.binary: list[bytes] = []
        self._unread: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    def __enter__(self) -> TsClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    # ------------------------------------------------------------------ frames

    def send(self, frame: dict[str, Any]) -> None:
        self.ws.send(json.dumps(frame))

    def session(self, message: dict[str, Any]) -> None:
        self.send({"type": "session", "message": message})

    def receive(self, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """One frame: a validated JSON frame, or ``{"type": "binary", "data": ...}`` (kept in
        :attr:`binary`, checked by the terminal tests)."""
        data = self.ws.recv(timeout=timeout)
        if isinstance(data, bytes):
            self.binary.append(data)
            if data[:1] == SNAPSHOT:
                _record("snapshot", json.loads(data[2:]))
            elif data[:1] == FILE_BEGIN and len(data) > 4:
                # [0x10, len(requestId), requestId, u16 length, metadata JSON]
                start = 2 + data[1]
                _record("file_begin", json.loads(data[start + 2 :]))
            return {"type": "binary", "data": data}
        frame = json.loads(data)
        validate_outbound(frame)
        _record("frame", frame)
        self.frames.append(frame)
        return frame

    def wait_binary(
        self, match: Callable[[bytes], bool], *, timeout: float = DEFAULT_TIMEOUT
    ) -> bytes:
        """The first binary frame matching, read or already received."""
        for frame in self.binary:
            if match(frame):
                return frame
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching binary frame arrived")
            frame = self.receive(left)
            if frame["type"] == "session":
                self._unread.append(frame["message"])
            elif frame["type"] == "binary" and match(frame["data"]):
                return bytes(frame["data"])

    def wait_for(
        self, match: Callable[[dict[str, Any]], bool], *, timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        """The first message (``frame["message"]``) matching, read or already buffered."""
        for index, message in enumerate(self._unread):
            if match(message):
                return self._unread.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching message arrived")
            frame = self.receive(left)
            if frame["type"] != "session":
                continue
            message = frame["message"]
            if match(message):
                return message
            self._unread.append(message)

    def messages(self, type_: str) -> list[dict[str, Any]]:
        """Every session message of ``type_`` received so far."""
        return [
            f["message"]
            for f in self.frames
            if f["type"] == "session" and f["message"]["type"] == type_
        ]

    # ---------------------------------------------------------------- protocol

    def hello(
        self, client_id: str = "cid_test", *, client_type: str = "cli", version: int = 1
    ) -> dict[str, Any]:
        self.send(
            {
                "type": "hello",
                "clientId": client_id,
                "clientType": client_type,
                "protocolVersion": version,
                "capabilities": {"reasoning_merge_enum": True},
                "appVersion": "0.1.65-beta.5",
            }
        )
        status = self.wait_for(
            lambda m: m["type"] == "status" and m["payload"]["status"] == "server_info"
        )
        payload: dict[str, Any] = status["payload"]
        return payload

    def request(
        self,
        type_: str,
        reply: str | tuple[str, str],
        timeout: float = DEFAULT_TIMEOUT,
        **fields: Any,
    ) -> dict[str, Any]:
        """Send ``type_`` with a fresh requestId; the payload of the reply of type ``reply``
        (or ``("status", <status>)``) or of an ``rpc_error`` with that requestId."""
        request_id = f"req-{next(self._ids)}"
        self.session({"type": type_, "requestId": request_id, **fields})

        def matches(message: dict[str, Any]) -> bool:
            payload = message.get("payload") or {}
            if payload.get("requestId") != request_id:
                return False
            if message["type"] == "rpc_error":
                return True
            if isinstance(reply, tuple):
                return message["type"] == reply[0] and payload.get("status") in reply[1:]
            return bool(message["type"] == reply)

        message = self.wait_for(matches, timeout=timeout)
        result: dict[str, Any] = {"__type": message["type"], **message["payload"]}
        return result
