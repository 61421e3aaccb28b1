"""What a relay transport gets from the daemon and reports back to it.

The relay settings (``daemon.relay`` in ``config.json``, the TypeScript Paseo's keys) and the
daemon's identity (its server id and its box keypair, ``daemon-keypair.json``) belong to the
daemon: a transport that dials a relay reads them through :class:`RelayHost` (the kernel's
:class:`~paseo_hookspecs.transport.TransportHost` implements it), and tells the daemon how the
relay is doing through :class:`RelayReporter`, which ``server.status`` and ``paseo daemon
status`` show.

.. versionadded:: 2.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

RelayState = Literal["off", "connecting", "connected", "reconnecting"]
"""``off``: not enabled; ``connecting``: the first control connection is being made;
``connected``: the control socket is open and answered; ``reconnecting``: it dropped (or never
answered) and the transport waits out its backoff."""


@dataclass(frozen=True)
class RelaySettings:
    """``daemon.relay`` as resolved (environment and ``--no-relay`` applied)."""

    enabled: bool
    endpoint: str
    """``host:port`` the daemon dials (plain ``ws`` unless exactly ``relay.paseo.sh:443``)."""
    public_endpoint: str
    """``host:port`` advertised in pairing offers (the endpoint when not set)."""


@dataclass(frozen=True)
class RelayIdentity:
    """Who the daemon is to its relay clients."""

    server_id: str
    """The relay session name (``server-id``)."""
    public_key: bytes = field(repr=False)
    """The daemon's X25519 public key (32 bytes)."""
    secret_key: bytes = field(repr=False)
    """Its secret key (32 bytes): never logged, never sent."""


@dataclass(frozen=True)
class RelayStatus:
    """A relay transport's state, as ``server.status`` reports it."""

    state: RelayState
    endpoint: str | None = None
    clients: int = 0
    """Client connections the relay announced and the daemon holds a data socket for."""
    last_error: str | None = None
    """Why the last control connection failed or ended (``None`` after a clean run)."""


@runtime_checkable
class RelayHost(Protocol):
    """The daemon's relay settings and identity (see the module docstring)."""

    @property
    def relay_settings(self) -> RelaySettings:
        """The settings the daemon started with (changing them needs a restart)."""

    def relay_identity(self) -> RelayIdentity:
        """The current identity, read from the home each call (blocking: a small file read),
        so a rotated keypair (``paseo daemon pair --rotate``) holds for the next handshake."""


@runtime_checkable
class RelayReporter(Protocol):
    """A :class:`~paseo_hookspecs.interfaces.transport.Transport` that dials a relay: the
    daemon asks it for :meth:`relay_status` when answering ``server.status``."""

    def relay_status(self) -> RelayStatus:
        """The current state (cheap, never blocks)."""


__all__ = [
    "RelayHost",
    "RelayIdentity",
    "RelayReporter",
    "RelaySettings",
    "RelayState",
    "RelayStatus",
]
