"""Plugins serving plain HTTP on the daemon's listen address: the mount, and what a transport
asks of it.

A plugin that implements an HTTP endpoint (for example an MCP server for agents) mounts an
ASGI 3 app at a path when its :class:`~paseo_hookspecs.context.DaemonContext` is an
:class:`HttpMounting`::

    @hookimpl
    def paseo_startup(context):
        if isinstance(context, HttpMounting):
            context.mount_http("/my/path", my_asgi_app)

The daemon screens every request to a mounted path exactly as it screens its own WebSocket
endpoint (an allowed ``Host``, at most one and an allowed ``Origin``, trusted proxies for
``X-Forwarded-For``) and answers 403 before the app sees a request that fails; what comes
after (the app's own credentials) is the app's. Only a transport that can carry POST bodies
and streamed answers serves mounts: it asks its
:class:`~paseo_hookspecs.transport.TransportHost` for the app of a path when the host is an
:class:`HttpMountHost`.

.. versionadded:: 2.0 (before, ``paseo_hookspecs.mcp_host`` held the types and the host)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol, runtime_checkable

AsgiScope = MutableMapping[str, Any]
AsgiReceive = Callable[[], Awaitable[MutableMapping[str, Any]]]
AsgiSend = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[AsgiScope, AsgiReceive, AsgiSend], Awaitable[None]]
"""An ASGI 3 application (``http`` scopes only are sent to mounted apps)."""


async def send_plain(send: AsgiSend, status: int, text: str) -> None:
    """Answer an HTTP request with ``status`` and ``text`` as an uncached plain-text body: the
    refusal (403, 404, 401) that the daemon's screening and a mounted app's own guard send."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"cache-control", b"no-store")],
        }
    )
    await send({"type": "http.response.body", "body": (text + "\n").encode()})


@runtime_checkable
class HttpMounting(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that serves plugins' HTTP apps."""

    def mount_http(self, path: str, app: AsgiApp) -> Callable[[], None]:
        """Serve ``app`` for requests to ``path`` (exactly, or below it) on the daemon's TCP
        listen address, behind the daemon's screening (see the module docstring). Returns the
        function that unmounts it. ``ValueError`` when another app has the path."""

    def http_url(self, path: str) -> str | None:
        """``http://host:port<path>`` at which this machine reaches ``path`` on the daemon's
        first TCP listen address; ``None`` when the daemon listens on no TCP address (then no
        mounted app is served). Known once the daemon serves: ask when the URL is needed."""


@runtime_checkable
class HttpMountHost(Protocol):
    """A :class:`~paseo_hookspecs.transport.TransportHost` that serves mounted HTTP apps."""

    def http_app(self, path: str) -> AsgiApp | None:
        """The (screened) app mounted for ``path`` (without the query), ``None`` when none."""


Forward = tuple[str, int] | int | None
"""What :meth:`HttpForwarding.http_forward` decides for one connection: ``None`` — the name
is not forwarded (serve the connection as usual); an ``int`` — answer with that HTTP status
and close; ``(host, port)`` — relay the connection's bytes, both ways, to that TCP address."""


@runtime_checkable
class HttpForwarding(Protocol):
    """A :class:`~paseo_hookspecs.transport.TransportHost` that forwards whole connections by
    their ``Host`` header (the daemon's reverse proxy to a workspace's services).

    A transport that serves TCP asks it once per connection, after reading the request head
    and before anything else sees it; the decision (the Host allowlist included) is the
    host's. A forwarded connection is a byte relay: HTTP bodies stream both ways and a
    WebSocket upgrade passes through untouched, with each side's reading paused while the
    other side's write buffer is full, so a slow peer cannot grow the daemon's memory.

    .. versionadded:: 2.0
    """

    def http_forward(self, host: str) -> Forward:
        """The decision for a connection whose (single) ``Host`` header is ``host``."""


__all__ = [
    "AsgiApp",
    "AsgiReceive",
    "AsgiScope",
    "AsgiSend",
    "Forward",
    "HttpForwarding",
    "HttpMountHost",
    "HttpMounting",
    "send_plain",
]
