"""A light synchronous client for the CLI's one-shot calls (``paseo ls``, ``paseo project``).

Standard library only (the WebSocket is :mod:`paseo.client.plainws`): no asyncio, no
pydantic, not even websockets (whose import reads package metadata and pulls in ssl and
urllib), so a command that makes a few calls and exits costs little more than starting Python
and opening a socket. It connects, says hello, answers :meth:`LightClient.call` with the raw JSON
result and raises the same errors as :class:`paseo.client.client.PaseoClient`; it does not
reconnect and ignores notifications. Commands that follow notifications use
:class:`paseo.client.sync.SyncClient`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import AccessDenied, PaseoError, Unavailable

from paseo import __version__
from paseo.client.discovery import discover
from paseo.client.plainws import (
    ConnectionClosed,
    HandshakeError,
    HandshakeRefused,
    PlainWebSocket,
)
from paseo.rpc.address import DEFAULT_HOST, WS_PATH
from paseo.rpc.errors import ConnectionLost, from_error_object

MAX_MESSAGE = 64 * 1024 * 1024


def refusal(status: int) -> PaseoError:
    """The error for an HTTP ``status`` the daemon refused the WebSocket upgrade with."""
    if status == 401:
        return AccessDenied(
            "the daemon refused the credentials (local credential or PASEO_PASSWORD)"
        )
    if status == 403:
        return AccessDenied("the daemon refused this Host or Origin")
    return Unavailable(f"the daemon refused the connection (HTTP {status})")


class LightClient:
    """Connected and greeted on construction; use as a context manager or call :meth:`close`.

    ``host``, ``home`` and ``env`` follow :func:`paseo.client.discovery.discover`.
    """

    def __init__(
        self,
        host: str | None = None,
        *,
        home: Path | str | None = None,
        client_type: str = "cli",
        connect_timeout: float = 10.0,
        request_timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.request_timeout = request_timeout
        self._ids = itertools.count(1)
        self._stack = contextlib.ExitStack()
        from paseo.client.connectors import connector_for

        via = connector_for(host, home=home, env=env)
        if via is not None:
            self._open_via(*via, client_type)
            return
        target = discover(host, home=home, env=env)
        self.target = target
        target.refuse_elsewhere()
        headers = {"User-Agent": f"paseo-client/{__version__}"}
        if target.token:
            headers["Authorization"] = f"Bearer {target.token}"
        address = target.address
        try:
            ws = PlainWebSocket(
                host=address.host or DEFAULT_HOST,
                port=address.port,
                unix_path=address.path,
                host_header=address.host_header(),
                path=WS_PATH,
                headers=headers,
                timeout=connect_timeout,
                max_size=MAX_MESSAGE,
            )
        except HandshakeRefused as exc:
            raise refusal(exc.status) from None
        except HandshakeError as exc:
            raise Unavailable(f"{address.listen_form()} is not a Paseo daemon: {exc}") from None
        except (OSError, TimeoutError, ConnectionClosed) as exc:
            raise target.not_running(str(exc)) from None
        self._stack.callback(ws.close)
        self._ws: Any = ws
        self._closed_errors: tuple[type[BaseException], ...] = (ConnectionClosed,)
        self._greet(client_type)

    def _greet(self, client_type: str) -> None:
        try:
            self.hello: dict[str, Any] = self.call(
                "server.hello",
                {
                    "clientId": f"py-{os.urandom(6).hex()}",
                    "clientType": client_type,
                    "version": __version__,
                },
            )
        except BaseException:
            self.close()
            raise

    def _open_via(self, connector: Any, host: str, client_type: str) -> None:
        """Through a plugin's connector (the relay): no token; the connector's words when the
        tunnel ends before the daemon answered."""
        from websockets.exceptions import ConnectionClosed as ChannelEnded

        from paseo.client.tunnel import SyncChannelConnection

        connection = SyncChannelConnection(connector, host)
        self._stack.callback(connection.close)
        self._ws = connection
        # The tunnel ends as websockets' connections do.
        self._closed_errors = (ConnectionClosed, ChannelEnded)
        try:
            self._greet(client_type)
        except ConnectionLost:
            ended = connection.ended
            if ended is not None and str(ended):
                raise Unavailable(str(ended)) from None
            raise

    def __enter__(self) -> LightClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    def call(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Call ``method`` and return its raw JSON result; ``timeout`` bounds the wait for the
        answer (default: the client's request timeout)."""
        limit = self.request_timeout if timeout is None else timeout
        request_id = next(self._ids)
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params or {})}
        deadline = time.monotonic() + limit
        try:
            self._ws.send(json.dumps(frame, separators=(",", ":")))
            while True:
                text = self._ws.recv(timeout=max(0.0, deadline - time.monotonic()))
                message = json.loads(text)
                if not isinstance(message, dict):
                    continue
                if message.get("id") == request_id and "method" not in message:
                    if "error" in message:
                        raise from_error_object(message["error"])
                    return message.get("result")
                if message.get("method") == "server.resync":
                    dropped = (message.get("params") or {}).get("droppedRequestIds") or []
                    if request_id in dropped:
                        raise ConnectionLost(
                            "the answer was dropped: this client fell behind (server.resync)"
                        )
        except self._closed_errors:
            raise ConnectionLost("the connection to the daemon was lost") from None
        except TimeoutError:
            raise Unavailable(f"{method} timed out after {limit:.0f}s") from None
        except ValueError:
            raise Unavailable(f"{method}: the daemon answered a frame that is not JSON") from None
