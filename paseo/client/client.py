"""The typed async client.

::

    async with PaseoClient() as client:          # discovers the local daemon
        status = await client.status()            # a StatusResult model
        client.on("config.changed", print)        # notification callback
        await client.subscribe(["config"])

Calls return pydantic models for the kernel methods (:meth:`PaseoClient.call` takes a
``result`` model for others). Errors raise the :class:`paseo_hookspecs.errors.PaseoError`
subclass matching ``error.data.code``. When the connection drops, calls in flight fail with
:class:`paseo.rpc.errors.ConnectionLost` and the client reconnects with exponential backoff,
repeats the hello and restores its subscriptions; ``on_gap`` callbacks hear about every
sequence gap (including the one a reconnect implies) so the caller can re-fetch.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import random
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, overload

from paseo_hookspecs.errors import PaseoError, Unavailable
from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection, connect, unix_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from paseo import __version__
from paseo.client.discovery import DaemonTarget, discover
from paseo.client.light import refusal
from paseo.rpc.errors import ConnectionLost, from_error_object
from paseo.rpc.models import (
    ConfigGetResult,
    ConfigPatchResult,
    ConfigReloadResult,
    HelloResult,
    PingResult,
    ShutdownResult,
    StatusResult,
    SubscribeResult,
    UnsubscribeResult,
)

log = logging.getLogger("paseo.client")

M = TypeVar("M", bound=BaseModel)
NotificationCallback = Callable[[str, dict[str, Any]], Awaitable[None] | None]
GapCallback = Callable[[str, int | None, int], Awaitable[None] | None]

MAX_MESSAGE = 64 * 1024 * 1024


class PaseoClient:
    """A connection to one daemon (see the module docstring).

    ``host`` and ``home`` follow :func:`paseo.client.discovery.discover`; ``token`` overrides
    the discovered one. ``reconnect=False`` makes a lost connection final.
    """

    def __init__(
        self,
        host: str | None = None,
        *,
        home: Path | str | None = None,
        token: str | None = None,
        client_id: str | None = None,
        client_type: str = "sdk",
        reconnect: bool = True,
        connect_timeout: float = 10.0,
        request_timeout: float = 60.0,
        max_backoff: float = 10.0,
        max_reconnects: int | None = None,
        on_reconnecting: Callable[[int, int | None], None] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._host = host
        self._home = home
        self._token = token
        self._env = env
        self.client_id = client_id or f"py-{uuid.uuid4().hex[:12]}"
        self.client_type = client_type
        self.reconnect = reconnect
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.max_backoff = max_backoff
        self.max_reconnects = max_reconnects
        """Attempts after a lost connection before giving up (``None``: never give up)."""
        self.on_reconnecting = on_reconnecting
        """Called before each reconnect attempt with its number and ``max_reconnects``, and
        with 0 once reconnected (how a command tells its user what is going on)."""
        self._gave_up = False
        self.hello: HelloResult | None = None
        self.target: DaemonTarget | None = None
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._callbacks: dict[str, list[NotificationCallback]] = {}
        self._gap_callbacks: list[GapCallback] = []
        self._seq: dict[str, int] = {}
        self._subscriptions: set[str] = set()
        self._connected = asyncio.Event()
        self._closed = False
        self._reader: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------ connection

    async def __aenter__(self) -> PaseoClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def lost(self) -> bool:
        """Disconnected for good: closed, not reconnecting, or out of reconnect attempts."""
        if self.connected:
            return False
        return self._closed or not self.reconnect or self._gave_up

    async def connect(self) -> HelloResult:
        """Connect and say hello; raises :class:`paseo.client.DaemonNotRunning` when nothing
        answers, :class:`AccessDenied` when the token is refused."""
        self._closed = False
        self._gave_up = False
        return await self._open()

    async def _open(self) -> HelloResult:
        from paseo.client.connectors import connector_for

        via = connector_for(self._host, home=self._home, env=self._env)
        if via is not None:
            return await self._open_via(*via)
        target = discover(self._host, home=self._home, env=self._env, token=self._token)
        self.target = target
        target.refuse_elsewhere()
        headers = {"Authorization": f"Bearer {target.token}"} if target.token else {}
        options: dict[str, Any] = {
            "additional_headers": headers,
            "open_timeout": self.connect_timeout,
            "max_size": MAX_MESSAGE,
            "compression": None,
            "user_agent_header": f"paseo-client/{__version__}",
        }
        try:
            if target.address.path is not None:
                ws = await unix_connect(target.address.path, "ws://localhost/ws", **options)
            else:
                ws = await connect(target.address.ws_url(), **options)
        except InvalidStatus as exc:
            raise refusal(exc.response.status_code) from None
        except (OSError, TimeoutError) as exc:
            raise target.not_running(str(exc)) from None
        return await self._greet(ws)

    async def _open_via(self, connector: Any, host: str) -> HelloResult:
        """Through a plugin's connector (the relay): no token, and no reconnect (a new
        tunnel is a new session), as the TypeScript CLI does."""
        from paseo.client.tunnel import ChannelConnection, open_channel

        self.reconnect = False
        channel = await open_channel(connector, host)
        connection = ChannelConnection(channel)
        try:
            return await self._greet(connection)  # type: ignore[arg-type]
        except ConnectionLost:
            # Ended before the daemon answered: the connector's words say why.
            if connection.ended is not None and str(connection.ended):
                raise Unavailable(str(connection.ended)) from None
            raise

    async def _greet(self, ws: ClientConnection) -> HelloResult:
        self._ws = ws
        self._seq.clear()
        self._reader = asyncio.get_running_loop().create_task(self._read(ws))
        try:
            self.hello = await self._request(
                "server.hello",
                {
                    "clientId": self.client_id,
                    "clientType": self.client_type,
                    "version": __version__,
                },
                HelloResult,
                self.request_timeout,
            )
            if self._subscriptions:
                await self._request(
                    "server.subscribe",
                    {"streams": sorted(self._subscriptions)},
                    None,
                    self.request_timeout,
                )
        except BaseException:
            await self._drop(ws)
            raise
        # Only now may queued calls go out: the hello is done and subscriptions are restored.
        self._connected.set()
        return self.hello

    async def close(self) -> None:
        """Close for good (no reconnect)."""
        self._closed = True
        ws = self._ws
        if ws is not None:
            await self._drop(ws)
        for task in list(self._background):
            task.cancel()
        self._fail_pending(ConnectionLost("the client was closed"))

    async def _drop(self, ws: ClientConnection) -> None:
        self._connected.clear()
        if self._ws is ws:
            self._ws = None
        with contextlib.suppress(Exception):
            await ws.close()
        reader = self._reader
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader

    def _fail_pending(self, error: PaseoError) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                if isinstance(frame, bytes):
                    continue
                self._dispatch(frame)
        except ConnectionClosed:
            pass
        finally:
            if self._ws is ws:
                self._ws = None
                self._connected.clear()
                self._fail_pending(ConnectionLost("the connection to the daemon was lost"))
                if self.reconnect and not self._closed:
                    self._spawn(self._reconnect_loop())

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _reconnect_loop(self) -> None:
        delay = 0.1
        attempt = 0
        while not self._closed:
            attempt += 1
            if self.max_reconnects is not None and attempt > self.max_reconnects:
                self._gave_up = True
                return
            if self.on_reconnecting is not None:
                self._call_back(self.on_reconnecting, attempt, self.max_reconnects)
            await asyncio.sleep(delay * (0.5 + random.random() / 2))  # noqa: S311 - jitter
            try:
                await self._open()
            except (PaseoError, OSError) as exc:
                log.debug("reconnect failed: %s", exc)
                delay = min(delay * 2, self.max_backoff)
                continue
            if self.on_reconnecting is not None:
                self._call_back(self.on_reconnecting, 0, self.max_reconnects)
            for stream in sorted(self._subscriptions):
                # Events published while disconnected are lost: a gap by definition.
                self._fire_gap(stream, None, 0)
            return

    # ---------------------------------------------------------- incoming

    def _dispatch(self, frame: str) -> None:
        try:
            message = json.loads(frame)
        except ValueError:
            log.warning("ignored a frame that is not JSON")
            return
        if not isinstance(message, dict):
            return
        if "method" in message and "id" not in message:
            params = message.get("params")
            self._notify(str(message["method"]), params if isinstance(params, dict) else {})
            return
        future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(from_error_object(message["error"]))
        else:
            future.set_result(message.get("result"))

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        stream, seq = params.get("stream"), params.get("seq")
        if isinstance(stream, str) and isinstance(seq, int):
            last = self._seq.get(stream)
            if last is not None and seq != last + 1:
                self._fire_gap(stream, last + 1, seq)
            self._seq[stream] = seq
        if method == "server.resync":
            dropped = params.get("droppedRequestIds") or []
            for request_id in dropped:
                future = self._pending.pop(request_id, None)
                if future is not None and not future.done():
                    future.set_exception(
                        ConnectionLost(
                            "the answer was dropped: this client fell behind (server.resync)"
                        )
                    )
            for name in params.get("streams") or []:
                self._fire_gap(str(name), None, 0)
        for key in (method, "*"):
            for callback in list(self._callbacks.get(key, ())):
                self._call_back(callback, method, params)

    def _call_back(self, callback: Callable[..., Any], *args: Any) -> None:
        try:
            outcome = callback(*args)
        except Exception:
            log.exception("notification callback failed")
            return
        if asyncio.iscoroutine(outcome):
            self._spawn(outcome)

    def _fire_gap(self, stream: str, expected: int | None, got: int) -> None:
        for callback in list(self._gap_callbacks):
            self._call_back(callback, stream, expected, got)

    def on(self, method: str, callback: NotificationCallback) -> Callable[[], None]:
        """Call ``callback(method, params)`` for each notification ``method`` (``*``: all);
        returns a function that removes it. Coroutine callbacks run as tasks."""
        self._callbacks.setdefault(method, []).append(callback)
        return lambda: self._callbacks.get(method, []).remove(callback)

    def on_gap(self, callback: GapCallback) -> Callable[[], None]:
        """Call ``callback(stream, expected_seq, got_seq)`` when events of a stream were missed
        (``expected_seq`` is ``None`` after a reconnect or resync): re-fetch that state."""
        self._gap_callbacks.append(callback)
        return lambda: self._gap_callbacks.remove(callback)

    # ------------------------------------------------------------- calls

    @overload
    async def call(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None = None,
        *,
        result: type[M],
        timeout: float | None = None,  # noqa: ASYNC109 - per-call bound
    ) -> M: ...

    @overload
    async def call(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None = None,
        *,
        result: None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - per-call bound
    ) -> Any: ...

    async def call(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None = None,
        *,
        result: type[M] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-call bound is the API
    ) -> Any:
        """Call ``method``; returns ``result.model_validate(answer)`` or the raw JSON.

        ``timeout`` bounds the wait for the answer (default: the client's request timeout).
        """
        limit = self.request_timeout if timeout is None else timeout
        if not self._connected.is_set():
            if self.lost:
                raise ConnectionLost("not connected")
            try:
                await asyncio.wait_for(self._connected.wait(), limit)
            except TimeoutError:
                raise ConnectionLost("not connected: the daemon is unreachable") from None
        payload = (
            params.model_dump(mode="json", exclude_none=True)
            if isinstance(params, BaseModel)
            else dict(params or {})
        )
        return await self._request(method, payload, result, limit)

    async def _request(
        self, method: str, params: dict[str, Any], result: type[M] | None, limit: float
    ) -> Any:
        ws = self._ws
        if ws is None:
            raise ConnectionLost("not connected")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        frame = json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
            separators=(",", ":"),
        )
        try:
            await ws.send(frame)
            answer = await asyncio.wait_for(future, limit)
        except ConnectionClosed:
            raise ConnectionLost("the connection to the daemon was lost") from None
        except TimeoutError:
            raise Unavailable(f"{method} timed out after {limit:.0f}s") from None
        finally:
            self._pending.pop(request_id, None)
        return result.model_validate(answer) if result is not None else answer

    # ------------------------------------------------------- kernel methods

    async def ping(self, data: str | None = None) -> PingResult:
        return await self.call("server.ping", {"data": data}, result=PingResult)

    async def status(self) -> StatusResult:
        return await self.call("server.status", result=StatusResult)

    async def shutdown(self, reason: str | None = None) -> ShutdownResult:
        """Ask the daemon to stop (local sessions only); it answers before stopping."""
        return await self.call("server.shutdown", {"reason": reason}, result=ShutdownResult)

    async def subscribe(self, streams: list[str]) -> SubscribeResult:
        """Receive the notifications of ``streams`` (restored after a reconnect)."""
        answer = await self.call("server.subscribe", {"streams": streams}, result=SubscribeResult)
        self._subscriptions.update(streams)
        for position in answer.streams:
            self._seq[position.stream] = position.seq
        return answer

    async def unsubscribe(self, streams: list[str]) -> UnsubscribeResult:
        self._subscriptions.difference_update(streams)
        return await self.call("server.unsubscribe", {"streams": streams}, result=UnsubscribeResult)

    async def config_get(self, path: str | None = None) -> ConfigGetResult:
        return await self.call("config.get", {"path": path}, result=ConfigGetResult)

    async def config_patch(self, patch: Mapping[str, Any]) -> ConfigPatchResult:
        return await self.call("config.patch", {"patch": dict(patch)}, result=ConfigPatchResult)

    async def config_reload(self) -> ConfigReloadResult:
        return await self.call("config.reload", result=ConfigReloadResult)
