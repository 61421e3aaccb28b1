"""Listen and connect addresses: ``host:port``, a bare port, ``unix:///path`` or a socket path.

Part of the contract because a transport parses ``daemon.listen`` (:attr:`TransportHost.listen
<paseo_hookspecs.transport.TransportHost.listen>`) and reports the addresses it bound. Standard
library only: the kernel's CLI fast status path and the client's host discovery use it too
(as :mod:`paseo.rpc.address`) without importing asyncio, websockets or pydantic.
"""

from __future__ import annotations

import os
from typing import NamedTuple

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 6767
WS_PATH = "/ws"


class AddressError(ValueError):
    """An address that none of the accepted forms describes."""


class Address(NamedTuple):
    """A TCP ``host``/``port`` or a unix socket ``path`` (exactly one of the two shapes).

    A NamedTuple rather than a dataclass: the CLI's fast paths cannot afford ``dataclasses``.
    """

    host: str | None = None
    port: int | None = None
    path: str | None = None

    @property
    def is_unix(self) -> bool:
        return self.path is not None

    @property
    def is_loopback(self) -> bool:
        """Whether connecting here stays on this machine (unix sockets always do)."""
        if self.path is not None:
            return True
        return is_loopback_host(self.host or "")

    def listen_form(self) -> str:
        """The form stored in ``paseo.pid`` and accepted by ``--listen`` / ``--host``."""
        if self.path is not None:
            return self.path
        host = self.host or DEFAULT_HOST
        if ":" in host:
            host = f"[{host}]"
        return f"{host}:{self.port}"

    def ws_url(self) -> str:
        """The WebSocket endpoint, as shown to people (``ws://127.0.0.1:6767/ws``)."""
        if self.path is not None:
            return f"unix://{self.path}"
        return f"ws://{self.listen_form()}{WS_PATH}"

    def host_header(self) -> str:
        """What a client sends as ``Host`` (unix sockets present themselves as localhost)."""
        if self.path is not None:
            return "localhost"
        return self.listen_form()

    def __str__(self) -> str:
        return self.listen_form()


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback IP literal."""
    import ipaddress

    lowered = host.strip("[]").lower()
    if lowered == "localhost" or lowered.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(lowered).is_loopback
    except ValueError:
        return False


def _port(text: str, original: str) -> int:
    if not text.isdigit():
        raise AddressError(f"invalid port in {original!r}")
    port = int(text)
    if port > 65535:
        raise AddressError(f"port out of range in {original!r}")
    return port


def parse_address(text: str) -> Address:
    """Parse ``host:port``, ``[v6]:port``, a bare port, ``unix:///path``, an absolute path, or
    ``ws://host:port[/ws]``. Port 0 is allowed here (a listener then picks a free port)."""
    original = text
    text = text.strip()
    if not text:
        raise AddressError("empty address")
    if text.startswith("unix://"):
        path = text[len("unix://") :]
        if not path.startswith("/"):
            raise AddressError(f"unix socket path must be absolute in {original!r}")
        return Address(path=os.path.normpath(path))
    if text.startswith("/"):
        return Address(path=os.path.normpath(text))
    for scheme in ("ws://", "http://", "tcp://"):
        if text.startswith(scheme):
            text = text[len(scheme) :].split("/", 1)[0].split("?", 1)[0]
            break
    if text.isdigit():
        return Address(host=DEFAULT_HOST, port=_port(text, original))
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise AddressError(f"expected [host]:port in {original!r}")
        return Address(host=host, port=_port(rest[1:], original))
    host, sep, port = text.rpartition(":")
    if not sep or not host or ":" in host:
        raise AddressError(
            f"expected host:port, a port, unix:///path or an absolute path, got {original!r}"
        )
    return Address(host=host, port=_port(port, original))
