"""What the daemon hands a transport: the :class:`TransportHost`.

A transport (see :class:`paseo_hookspecs.interfaces.transport.Transport`) owns the listener and
the framing of one kind of connection (WebSocket, a relay, …). Everything else is the host's:
which requests are allowed (``Host``, ``Origin``, proxies, the presented credential), the
session a connection becomes, its limits' meaning, the health and status answers. The
transport reports what it *observed* (:class:`PeerFacts`) and acts on the host's decision
(:class:`Admission`); it never decides trust itself.

A connection's life, as the transport sees it::

    admission = await host.admit(facts, "session")
    if admission.status != 200:
        refuse(admission.status)             # 401, 403 or 503, before any upgrade
    session = host.open_session(
        kind=admission.kind, channel=MyChannel(conn), observed=admission.observed, limits=limits
    )
    runner = asyncio.create_task(session.run())   # writes outbound frames through the channel
    async for frame in conn:
        session.receive(frame)
    session.connection_lost()                # the peer went away (or we closed it)
    await runner
"""

from __future__ import annotations

import errno
import os
import socket
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from paseo_hookspecs.agents import Agents

AdmissionPurpose = Literal["public", "status", "session"]
"""What a request is for, which decides the checks :meth:`TransportHost.admit` applies:

* ``public`` — an unauthenticated answer (a health probe, a "not found"): only the request
  screening (an allowed ``Host``, at most one ``Origin``);
* ``status`` — the authenticated status answer: screening, an allowed ``Origin``, a valid
  credential;
* ``session`` — a connection that becomes a session: screening, an allowed ``Origin``, the
  daemon accepting connections and the transport below its connection cap, a valid credential.
"""


@dataclass(frozen=True)
class PeerFacts:
    """What the transport observed of one request, before deciding anything.

    These are the only inputs to trust: nothing a client says later (``server.hello``)
    changes them.
    """

    transport: str
    """How the connection arrived, as shown in logs (``tcp``, ``unix``, …)."""
    unix_socket: bool
    """The connection came through a unix domain socket (always this machine)."""
    peer: str | None
    """The socket peer's IP address (``None`` on a unix socket)."""
    hosts: tuple[str, ...] = ()
    """Every ``Host`` header value received (exactly one is required for most policies)."""
    origins: tuple[str, ...] = ()
    """Every ``Origin`` header value received (browsers send one; more is refused)."""
    forwarded_for: str | None = None
    """The ``X-Forwarded-For`` chain (several headers joined with ``,``), honoured only when
    the peer is a trusted proxy."""
    credential: str | None = None
    """The token presented (an ``Authorization: Bearer`` value, or a browser's
    ``paseo.bearer.<token>`` subprotocol), ``None`` when there is none."""
    peer_uid: int | None = None
    """The user id of a unix-socket peer as the kernel reported it (``SO_PEERCRED``), ``None``
    when not read. A peer running as the daemon's own user is admitted as ``local`` without a
    credential (the socket is the credential: it is created 0600 in the daemon's home);
    transports that do not read it keep requiring the token."""
    relay: bool = False
    """The connection arrived through a relay, end-to-end encrypted with the daemon's keypair
    (the transport completed the handshake before reporting it). The key in the pairing offer
    is the credential: the host admits it as ``remote`` without a password, never ``local``,
    and skips the ``Host``/``Origin`` screening (no HTTP request of the client reaches the
    daemon; ``peer`` is ``None``).

    .. versionadded:: 2.0
    """


@dataclass(frozen=True)
class Observed:
    """What the host retained of an admitted connection (logged, shown in status)."""

    transport: str
    unix_socket: bool
    peer: str | None
    client_address: str | None
    """The client's address: the peer, or the forwarded client behind a trusted proxy."""
    origin: str | None


@dataclass(frozen=True)
class Admission:
    """The host's decision on one request."""

    status: int
    """``200`` when admitted, else the HTTP status to refuse with: ``403`` (``Host`` or
    ``Origin`` not allowed), ``401`` (no valid credential), ``429`` (too many password
    attempts: see :attr:`retry_after`) or ``503`` (not accepting, or the transport is at its
    connection cap)."""
    kind: str | None = None
    """The session kind (``local``, ``remote``, …) when a credential was checked and valid."""
    observed: Observed | None = None
    """The connection as the host will remember it (set once screening passed)."""
    cors_origin: str | None = None
    """An allowed browser ``Origin`` to echo in ``Access-Control-Allow-Origin``, if any."""
    retry_after: float | None = None
    """Seconds before the client may try again (a ``429``; sent as ``Retry-After``)."""

    @property
    def admitted(self) -> bool:
        return self.status == 200


@dataclass(frozen=True)
class SessionLimits:
    """Per-connection bounds, chosen by the transport (usually from its settings) and enforced
    by the host's session."""

    outbound_queue: int = 1000
    """Frames queued for a client that does not read before ``server.resync`` replaces them."""
    outbound_bytes: int = 8 << 20
    """Bytes queued for one client before ``server.resync`` replaces them (a single frame
    larger than this is still sent when nothing else is queued)."""
    outbound_bytes_total: int = 32 << 20
    """Bytes queued for all clients together; beyond, the clients with the most queued are
    told to resync (or closed) first."""
    max_in_flight: int = 64
    """Concurrent calls per connection."""
    rate_per_second: float = 500.0
    """Sustained calls per second per connection."""
    rate_burst: int = 1000
    """Calls allowed in a burst."""
    hello_timeout: float = 15.0
    """Seconds a connection has to call ``server.hello`` (close 4001)."""
    idle_timeout: float = 3600.0
    """Seconds without frames or subscriptions before close 4000."""


class Channel(Protocol):
    """What a transport implements for each connection: send one text frame, close."""

    async def send(self, text: str) -> None:
        """Send one text frame; raise when the connection is gone."""

    async def close(self, code: int, reason: str) -> None:
        """Close the connection with a WebSocket close code (4000-4999 are Paseo's)."""


@runtime_checkable
class ImmediateChannel(Channel, Protocol):
    """A :class:`Channel` that can also write a frame without awaiting (optional).

    The host writes an answer or a notification through :meth:`send_now` when nothing else is
    queued for the connection, so the hot path needs no task switch; when it returns ``False``
    the host queues the frame and awaits :meth:`Channel.send` as usual.
    """

    def send_now(self, text: str) -> bool:
        """Write one text frame at once if the connection takes it without waiting (open, and
        nothing left unwritten in its buffer); ``False``, having written nothing, otherwise.
        Never raises: a connection that fails while writing is treated as gone."""


class SessionHandle(Protocol):
    """The host's session of one connection, handed back by :meth:`TransportHost.open_session`."""

    def receive(self, frame: str | bytes) -> None:
        """Feed one inbound frame (never blocks; a binary frame closes with 1003)."""

    async def run(self) -> None:
        """Write outbound frames through the channel until the session is closed."""

    def connection_lost(self) -> None:
        """The peer went away: cancel its calls, stop writing, forget the session."""

    @property
    def agents(self) -> Agents:
        """The agent port (:mod:`paseo_hookspecs.agents`) with this session's access, for a
        transport that serves its own protocol over the daemon's services instead of framing
        JSON-RPC into :meth:`receive`. It lets the session do exactly what its kind may do
        with the ``agent.*`` methods and the ``agents`` stream, and no more: each call is
        admitted as a frame would be (``server.hello`` said, the daemon accepting, one token
        of the rate limit, a call in flight), raising the same errors (``AccessDenied``,
        ``rate_limited``, ``shutting_down``, …); ``create`` takes only what ``agent.create``
        takes (no ``worktree``, ``env`` or ``recordFields``); ``subscribe`` never includes
        internal agents, and its subscriptions end with :meth:`connection_lost`; adding a
        session contributor is refused (plugins use ``DaemonContext.agents``).

        .. versionadded:: 2.0
        """


class TransportHost(Protocol):
    """The daemon as a transport sees it (passed to
    :meth:`~paseo_hookspecs.interfaces.transport.Transport.start`; the kernel's RPC server
    implements it). See the :class:`~paseo_hookspecs.interfaces.transport.Transport` docstring
    for an "implement and register" example.
    """

    @property
    def listen(self) -> str:
        """The configured listen address (``daemon.listen``, environment overrides applied);
        parse it with :func:`paseo_hookspecs.address.parse_address`."""

    def config_section(self, plugin_id: str) -> Any:
        """The validated settings model of ``plugin_id`` (``None`` when it has none)."""

    @property
    def home(self) -> str:
        """The daemon's home directory (``$PASEO_HOME``), where a transport may create its
        own unix socket."""

    async def admit(
        self, facts: PeerFacts, purpose: AdmissionPurpose, *, at_capacity: bool = False
    ) -> Admission:
        """Decide a request from what was observed (see :data:`AdmissionPurpose`).

        ``at_capacity``: the transport already holds its maximum number of connections (only
        meaningful for ``session``; it answers ``503`` after the ``Origin`` check).
        """

    def health(self) -> dict[str, Any]:
        """The unauthenticated health answer (JSON-ready): ``{"ok": true, "version": ...}``."""

    async def status(self) -> dict[str, Any]:
        """The ``server.status`` result (JSON-ready), for an admitted ``status`` request."""

    def open_session(
        self, *, kind: str, channel: Channel, observed: Observed, limits: SessionLimits
    ) -> SessionHandle:
        """A session for an admitted connection (``kind`` and ``observed`` from its
        :class:`Admission`)."""


def prepare_socket_path(path: str) -> None:
    """Make ``path`` ready for a unix socket a transport is about to listen on: create its
    directory (owner-only), remove a socket file a dead daemon left behind, refuse one a live
    process listens on (``EADDRINUSE``) or a file that is no socket (``EEXIST``). Blocking: run
    it in a thread."""
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise OSError(errno.EEXIST, f"{path}: exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)
        return
    finally:
        probe.close()
    raise OSError(errno.EADDRINUSE, f"{path}: another process listens there")


__all__ = [
    "Admission",
    "AdmissionPurpose",
    "Channel",
    "Observed",
    "PeerFacts",
    "SessionHandle",
    "SessionLimits",
    "TransportHost",
    "prepare_socket_path",
]
