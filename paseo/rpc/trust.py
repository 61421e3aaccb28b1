"""Who may connect, and as what: Host and Origin checks, proxy handling, authentication.

Trust comes only from what the server observed — the transport (a unix socket or a loopback
peer), the client address (through trusted proxies only) and the token presented — never from
what the client says in ``server.hello``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from paseo.rpc.address import is_loopback_host

if TYPE_CHECKING:
    from paseo.home.app_tokens import AppTokens
    from paseo.rpc.guard import PasswordGuard

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

BCRYPT_MAX_BYTES = 72
"""bcrypt reads at most 72 bytes; longer passwords are truncated on both sides, as bcryptjs
(used by the TypeScript Paseo) does, so hashes stay interchangeable."""


def _host_only(host_header: str) -> str:
    """The host of a ``Host`` header, lowercased, without port, brackets or trailing dot."""
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _ip(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not text:
        return None
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class AccessPolicy:
    """The HTTP-level checks, built from ``daemon.hostnames``, ``daemon.cors.allowedOrigins``
    and ``daemon.trustedProxies``. Immutable: a reload builds a new one."""

    def __init__(
        self,
        *,
        hostnames: Literal[True] | Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        trusted_proxies: Literal[True] | Iterable[str] = ("loopback",),
        loopback_listener: bool = True,
    ) -> None:
        self._any_host = hostnames is True
        self._loopback_listener = loopback_listener
        self._hostnames = frozenset(
            () if hostnames is True else (h.strip().lower().rstrip(".") for h in hostnames)
        )
        origins = [o.strip() for o in allowed_origins if o.strip()]
        self._any_origin = "*" in origins
        self._origins = frozenset(_normalize_origin(o) for o in origins if o != "*")
        self._any_proxy = trusted_proxies is True
        self._proxy_loopback = False
        networks: list[IpNetwork] = []
        if trusted_proxies is not True:
            for entry in trusted_proxies:
                if entry.strip().lower() in ("loopback", "localhost"):
                    self._proxy_loopback = True
                    continue
                try:
                    networks.append(ipaddress.ip_network(entry.strip(), strict=False))
                except ValueError:
                    continue  # invalid entries trust nobody
        self._proxies = tuple(networks)

    def host_allowed(self, host_header: str | None) -> bool:
        """Defends against DNS rebinding: only names the user allowed reach the daemon.

        Always allowed: ``localhost``, ``*.localhost`` and IP literals. Configured entries match
        exactly, or as suffixes when written ``.example.com`` / ``*.example.com``.
        """
        if self._any_host:
            return True
        if not host_header:
            return False
        host = _host_only(host_header)
        if not host:
            return False
        if host == "localhost" or host.endswith(".localhost") or _is_ip(host):
            return True
        return self._configured(host)

    def forward_allowed(self, host_header: str) -> bool:
        """Whether a connection may be relayed to a workspace service by its ``Host``.

        Stricter than :meth:`host_allowed`: a relayed connection needs no credential, so the
        always-allowed ``*.localhost`` names count only on a loopback listener, where every
        peer is this machine. On any other listener (``0.0.0.0``, a LAN address) a remote
        client could send such a ``Host`` by hand and reach the service; there the names must
        be listed in ``daemon.hostnames`` (``.localhost`` or exact names) to be forwarded.
        """
        if not self.host_allowed(host_header):
            return False
        if self._loopback_listener or self._any_host:
            return True
        host = _host_only(host_header)
        if host == "localhost" or host.endswith(".localhost"):
            return self._configured(host)
        return True

    def _configured(self, host: str) -> bool:
        if host in self._hostnames:
            return True
        for entry in self._hostnames:
            suffix = entry[1:] if entry.startswith("*.") else entry if entry.startswith(".") else ""
            if suffix and host.endswith(suffix):
                return True
        return False

    def origin_allowed(self, origin: str | None, host_header: str | None) -> bool:
        """Browsers always send ``Origin``; other clients usually send none (allowed).

        A browser origin is allowed when configured (``*`` allows any) or when it is the same
        origin as the ``Host`` it targets (which itself passed :meth:`host_allowed`).
        """
        if origin is None:
            return True
        if self._any_origin:
            return True
        normalized = _normalize_origin(origin)
        if normalized in self._origins:
            return True
        if host_header and normalized != "null":
            netloc = urlsplit(normalized).netloc
            return bool(netloc) and netloc == host_header.strip().lower()
        return False

    def _is_trusted_proxy(self, address: str) -> bool:
        if self._any_proxy:
            return True
        ip = _ip(address)
        if ip is None:
            return False
        if self._proxy_loopback and ip.is_loopback:
            return True
        return any(ip in network for network in self._proxies)

    def client_address(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The client's address: the peer, unless the peer is a trusted proxy that forwarded
        the request, in which case the right-most ``X-Forwarded-For`` hop that is not itself a
        trusted proxy."""
        if peer is None or not forwarded_for or not self._is_trusted_proxy(peer):
            return peer
        hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
        for hop in reversed(hops):
            if not self._is_trusted_proxy(hop):
                return hop
        return hops[0] if hops else peer


def _normalize_origin(origin: str) -> str:
    origin = origin.strip().rstrip("/").lower()
    if origin == "null":
        return origin
    parts = urlsplit(origin)
    if not parts.scheme or not parts.netloc:
        return origin
    return f"{parts.scheme}://{parts.netloc}"


def is_local_client(*, unix_socket: bool, client_address: str | None) -> bool:
    """Whether the connection comes from this machine: a unix socket or a loopback address."""
    if unix_socket:
        return True
    ip = _ip(client_address)
    if ip is None:
        return client_address is not None and is_loopback_host(client_address)
    return ip.is_loopback


def hash_password(password: str) -> str:
    """A bcrypt hash of ``password`` (blocking: call from a thread in async code)."""
    import bcrypt

    return bcrypt.hashpw(password.encode()[:BCRYPT_MAX_BYTES], bcrypt.gensalt()).decode("ascii")


def _check_password(password: str, hashed: str) -> bool:
    import bcrypt

    try:
        return bcrypt.checkpw(password.encode()[:BCRYPT_MAX_BYTES], hashed.encode("ascii"))
    except ValueError:  # a malformed hash in config.json matches nothing
        return False


class Authenticator:
    """Decides a session kind from the token a client presented.

    ``local``: a client on this machine holding the local credential. ``remote``: any client
    holding the password (when one is configured) or an app token (``tokens``,
    :mod:`paseo.home.app_tokens`: what a password grants, never local authority). Anything else
    is refused (``None``).
    Password checks go through ``guard`` (see :mod:`paseo.rpc.guard`), which may raise
    :class:`~paseo.rpc.guard.Throttled` instead.
    """

    def __init__(
        self,
        local_credential: str,
        password_hash: str | None,
        guard: PasswordGuard,
        tokens: AppTokens | None = None,
    ) -> None:
        self._tokens = tokens
        self._credential = local_credential
        self._password_hash = password_hash
        self._guard = guard
        # bcrypt is deliberately slow; remember tokens already verified (by digest only) so a
        # reconnecting client does not pay it again.
        self._verified: set[bytes] = set()

    @property
    def password_required(self) -> bool:
        return self._password_hash is not None

    async def authenticate(self, token: str | None, *, local: bool, peer: str) -> str | None:
        """The session kind for ``token``, or ``None`` to refuse the connection.

        ``peer`` is the client address the guard keys its backoff on. The local credential
        is compared first, so a local client never waits for the guard.
        """
        if not token:
            return None
        if (
            local
            and self._credential
            and hmac.compare_digest(token.encode(), self._credential.encode())
        ):
            return "local"
        if self._tokens is not None and self._tokens.verify(token) is not None:
            return "remote"
        password_hash = self._password_hash
        if password_hash is None:
            return None
        digest = hashlib.sha256(token.encode()).digest()
        if digest in self._verified:
            return "remote"
        if await self._guard.check(peer, lambda: _check_password(token, password_hash)):
            self._verified.add(digest)
            return "remote"
        return None
