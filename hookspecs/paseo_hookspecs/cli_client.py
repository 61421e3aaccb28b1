"""How a plugin's CLI command (``paseo hub …``, ``paseo loop …``) reaches the running daemon:
one JSON-RPC call over its WebSocket, to the RPC methods the plugin registered there.

Plugins may import neither the kernel's client nor each other, so the contract carries this
smallest client that follows the kernel's discovery rules (``PASEO_HOST``, else the JSON-RPC
address in ``$PASEO_HOME/paseo.pid`` — ``rpcListen``, since ``listen`` may name the
TypeScript-protocol socket — else ``daemon.listen`` in config.json, else ``127.0.0.1:6767``;
the local credential for a daemon on this machine). Commands should depend only on
:class:`DaemonCaller`, so a kernel that hands plugin commands a caller can replace this module
without touching them. It needs ``websockets`` (a kernel dependency, not the contract's): it is
imported only when a call is made, so building a CLI parser stays cheap.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any, Protocol

from paseo_hookspecs.errors import PaseoError, Unavailable

DEFAULT_LISTEN = "127.0.0.1:6767"


class DaemonCaller(Protocol):
    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Call ``method``; return its result object, or raise :class:`PaseoError` with the
        daemon's error code."""


class RemoteError(PaseoError):
    """An error answered by the daemon; ``code`` is the daemon's string code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # per-instance: the code comes off the wire


def _home(home: str | None) -> Path:
    raw = home or os.environ.get("PASEO_HOME") or "~/.paseo"
    return Path(os.path.abspath(os.path.expanduser(raw)))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _listen(home: Path) -> str:
    if os.environ.get("PASEO_HOST"):
        return os.environ["PASEO_HOST"]
    marker = _read_json(home / "paseo.pid")
    for key in ("rpcListen", "listen"):
        recorded = marker.get(key)
        if isinstance(recorded, str) and recorded and not recorded.endswith(":0"):
            return recorded
    daemon = _read_json(home / "config.json").get("daemon")
    configured = daemon.get("listen") if isinstance(daemon, dict) else None
    return configured if isinstance(configured, str) and configured else DEFAULT_LISTEN


def _target(listen: str) -> tuple[str | None, str]:
    """``(unix socket path, url)``; the path is ``None`` for TCP."""
    text = listen.strip()
    if text.startswith("unix://"):
        return os.path.normpath(text[len("unix://") :]), "ws://localhost/ws"
    if text.startswith("/"):
        return os.path.normpath(text), "ws://localhost/ws"
    for scheme in ("ws://", "http://", "tcp://"):
        if text.startswith(scheme):
            text = text[len(scheme) :].split("/", 1)[0]
    if text.isdigit():
        text = f"127.0.0.1:{text}"
    return None, f"ws://{text}/ws"


def _local(url: str) -> bool:
    host = url[len("ws://") :].rsplit(":", 1)[0].strip("[]").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


class WebSocketCaller:
    """One connection per call (the commands make one call each)."""

    def __init__(
        self, home: str | None = None, *, timeout: float = 120.0, client_name: str = "plugin"
    ) -> None:
        # ``client_name`` only prefixes the clientId the daemon logs (``hub`` → ``hub-cli-…``).
        self._home = _home(home)
        self._timeout = timeout
        self._client_name = client_name

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from websockets.asyncio.client import connect, unix_connect
        from websockets.exceptions import ConnectionClosed, InvalidStatus

        path, url = _target(_listen(self._home))
        token = None
        if path is not None or _local(url):
            try:
                token = (self._home / "local-credential").read_text().strip() or None
            except OSError:
                token = None
        token = token or os.environ.get("PASEO_PASSWORD") or None
        options: dict[str, Any] = {
            "additional_headers": {"Authorization": f"Bearer {token}"} if token else {},
            "open_timeout": 10,
            "compression": None,
        }
        try:
            if path is not None:
                ws = await unix_connect(path, url, **options)
            else:
                ws = await connect(url, **options)
        except InvalidStatus as exc:
            raise Unavailable(
                f"the daemon refused the connection (HTTP {exc.response.status_code})"
            ) from None
        except (OSError, TimeoutError):
            raise Unavailable(
                f"the Paseo daemon is not running (home {self._home}); "
                "start it with `paseo daemon start`"
            ) from None
        try:
            async with ws:
                hello = {
                    "clientId": f"{self._client_name}-cli-{uuid.uuid4().hex[:8]}",
                    "clientType": "cli",
                }
                await self._request(ws, 1, "server.hello", hello)
                result = await self._request(ws, 2, method, params)
        except ConnectionClosed:
            raise Unavailable("the daemon closed the connection") from None
        if not isinstance(result, dict):
            raise Unavailable(f"the daemon answered {method} with no result object")
        return result

    async def _request(self, ws: Any, request_id: int, method: str, params: dict[str, Any]) -> Any:
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await ws.send(json.dumps(frame))
        async with asyncio.timeout(self._timeout):
            while True:
                answer = json.loads(await ws.recv())
                if isinstance(answer, dict) and answer.get("id") == request_id:
                    break
        error = answer.get("error")
        if isinstance(error, dict):
            data = error.get("data")
            code = data.get("code") if isinstance(data, dict) else None
            code = code if isinstance(code, str) else "internal_error"
            raise RemoteError(code, str(error.get("message") or code))
        return answer.get("result")
