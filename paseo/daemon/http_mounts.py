"""Plugins' HTTP apps on the daemon's listen address (:mod:`paseo_hookspecs.http`).

A transport-level mount and nothing more: every request to a mounted path is screened exactly
as a WebSocket upgrade is (:meth:`paseo.rpc.server.RpcServer.admit` with purpose ``public``:
an allowed ``Host``, at most one and an allowed ``Origin``, trusted proxies for
``X-Forwarded-For``) and refused with 403 before the app sees it; the app's own credentials
(a per-caller token, say) are the app's business.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from paseo_hookspecs.http import AsgiApp, AsgiReceive, AsgiScope, AsgiSend, send_plain
from paseo_hookspecs.transport import PeerFacts

from paseo.rpc.address import parse_address

if TYPE_CHECKING:
    from paseo.rpc.server import RpcServer


def _header(scope: AsgiScope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope.get("headers", ()) if key == name]


class HttpMounts:
    """``rpc`` is the server once it exists (its trust decision); ``listen`` the daemon's
    listen addresses (the served ones, then the configured one)."""

    def __init__(
        self, rpc: Callable[[], RpcServer | None], listen: Callable[[], list[str]]
    ) -> None:
        self._rpc = rpc
        self._listen = listen
        self._mounts: dict[str, AsgiApp] = {}

    def mount_http(self, path: str, app: AsgiApp) -> Callable[[], None]:
        prefix = path.rstrip("/")
        if not prefix.startswith("/") or prefix in ("/ws", "/api") or prefix in self._mounts:
            raise ValueError(f"cannot mount an HTTP app at {path!r}")
        guarded = self._screened(app)
        self._mounts[prefix] = guarded

        def unmount() -> None:
            if self._mounts.get(prefix) is guarded:
                del self._mounts[prefix]

        return unmount

    def http_app(self, path: str) -> AsgiApp | None:
        for prefix, app in self._mounts.items():
            if path == prefix or path.startswith(prefix + "/"):
                return app
        return None

    def http_url(self, path: str) -> str | None:
        for listen in self._listen():
            try:
                address = parse_address(listen)
            except ValueError:
                continue
            if address.path is None and address.port:
                host = address.host or "127.0.0.1"
                if host in ("0.0.0.0", "::", ""):  # noqa: S104 - reaching a wildcard listener
                    host = "127.0.0.1"
                shown = f"[{host}]" if ":" in host else host
                return f"http://{shown}:{address.port}{path}"
        return None

    def _screened(self, app: AsgiApp) -> AsgiApp:
        async def screened(scope: AsgiScope, receive: AsgiReceive, send: AsgiSend) -> None:
            rpc = self._rpc()
            if scope.get("type") != "http" or rpc is None:
                await send_plain(send, 404, "Not Found")
                return
            client = scope.get("client")
            forwarded = _header(scope, b"x-forwarded-for")
            facts = PeerFacts(
                transport="tcp",
                unix_socket=False,
                peer=str(client[0]) if client else None,
                hosts=tuple(_header(scope, b"host")),
                origins=tuple(_header(scope, b"origin")),
                forwarded_for=",".join(forwarded) if forwarded else None,
            )
            admission = await rpc.admit(facts, "public")
            if not admission.admitted or (facts.origins and admission.cors_origin is None):
                status = admission.status if not admission.admitted else 403
                await send_plain(send, status, "Forbidden" if status == 403 else "Refused")
                return
            await app(scope, receive, send)

        return screened
