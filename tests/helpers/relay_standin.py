"""A daemon stand-in on a relay, for testing relay clients without a daemon: the control
socket, a data socket per announced connection, the responder handshake
(:class:`paseo_relay.e2ee.ResponderChannel`) and a JSON-RPC answer to ``server.hello`` and
``server.ping`` inside the boxes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from nacl.public import PrivateKey
from paseo_relay import e2ee
from paseo_relay.offer import relay_ws_url
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed


class DaemonStandIn:
    def __init__(self, endpoint: str, server_id: str, key: PrivateKey) -> None:
        self.endpoint = endpoint
        self.server_id = server_id
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self.failures: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._control: ClientConnection | None = None
        self.attached = asyncio.Event()

    async def start(self) -> None:
        self._control = await connect(relay_ws_url(self.endpoint, self.server_id, "server"))
        self._spawn(self._read_control(self._control))

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._control is not None and self._control.transport is not None:
            self._control.transport.abort()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_control(self, control: ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in control:
                message = json.loads(frame)
                if message.get("type") == "sync":
                    self.attached.set()
                    for cid in message["connectionIds"]:
                        self._spawn(self._serve(cid))
                elif message.get("type") == "connected":
                    self._spawn(self._serve(message["connectionId"]))

    async def _serve(self, cid: str) -> None:
        url = relay_ws_url(self.endpoint, self.server_id, "server", cid)
        async with connect(url) as data:
            channel = e2ee.ResponderChannel(self.key)
            with contextlib.suppress(ConnectionClosed):
                async for frame in data:
                    try:
                        received = channel.receive(frame)
                    except e2ee.E2eeError as exc:
                        self.failures.append(str(exc))
                        await data.close(e2ee.CLOSE_CODE, str(exc))
                        return
                    for outgoing in received.outgoing:
                        await data.send(outgoing)
                    if isinstance(received.message, str):
                        answer = self._answer(json.loads(received.message))
                        await data.send(channel.send(json.dumps(answer)))

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        method = request.get("method")
        params = request.get("params") or {}
        if method == "server.hello":
            result: dict[str, Any] = {
                "serverId": self.server_id,
                "version": "0-standin",
                "protocolVersion": 1,
                "sessionKind": "remote",
                "features": {},
                "methods": ["server.ping"],
            }
        elif method == "server.ping":
            result = {"data": params.get("data"), "time": time.time()}
        else:
            error = {"code": -32601, "message": "no such method"}
            return {"jsonrpc": "2.0", "id": request.get("id"), "error": error}
        return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}
