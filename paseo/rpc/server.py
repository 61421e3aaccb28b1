"""The daemon's RPC hub: methods, sessions, streams, trust, and the transports that feed it.

The composition root (:mod:`paseo.daemon`) builds it, adds every method group, and starts the
registered transports with :meth:`RpcServer.start_transports`; to them the server is the
:class:`paseo_hookspecs.transport.TransportHost`. :meth:`RpcServer.stop` takes it down: refuse
new calls, let calls in flight finish (bounded), fail the rest, say goodbye, close connections,
stop transports. What the daemon answers (``server.*``, ``config.*``) lives in
:mod:`paseo.daemon`; this module is wire mechanics only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.channels import ChannelProtocol, MessageChannel
from paseo_hookspecs.http import AsgiApp, Forward, HttpForwarding, HttpMountHost
from paseo_hookspecs.relay import RelayIdentity, RelaySettings
from paseo_hookspecs.transport import (
    Admission,
    AdmissionPurpose,
    Channel,
    Observed,
    PeerFacts,
    SessionLimits,
)
from pydantic import BaseModel

from paseo import __version__
from paseo.rpc import channels
from paseo.rpc.address import AddressError, parse_address
from paseo.rpc.close_codes import CLOSE_CODES, CLOSE_GOING_AWAY
from paseo.rpc.dispatch import MethodTable, encode_notification
from paseo.rpc.guard import PasswordGuard, Throttled
from paseo.rpc.models import HealthResult, ShuttingDownEvent, StatusResult, StreamEvent
from paseo.rpc.session import Session
from paseo.rpc.trust import AccessPolicy, Authenticator, hash_password, is_local_client

if TYPE_CHECKING:
    from paseo_hookspecs.context import DaemonContext
    from paseo_hookspecs.interfaces.transport import Transport

    from paseo.config import ResolvedConfig
    from paseo.home.app_tokens import AppTokens
    from paseo.services import ConfigView

log = logging.getLogger("paseo.rpc")

DRAIN_TIMEOUT = 5.0
"""How long shutdown waits for calls in flight before failing them."""


@dataclass
class Stream:
    """A named event stream with its own sequence numbers."""

    name: str
    access: frozenset[str]
    seq: int = 0


class RpcServer:
    """See the module docstring. One per daemon; implements
    :class:`~paseo_hookspecs.transport.TransportHost` and
    :class:`~paseo.rpc.session.SessionHost`.

    ``context`` is the daemon as method handlers see it, ``config`` the live configuration
    (trust settings are read from it), ``status`` computes the ``server.status`` answer.
    """

    def __init__(
        self,
        context: DaemonContext,
        *,
        config: ConfigView,
        local_credential: str,
        status: Callable[[], Awaitable[StatusResult]],
        app_tokens: AppTokens | None = None,
        relay_identity: Callable[[], RelayIdentity] | None = None,
    ) -> None:
        self.context = context
        self.methods = MethodTable()
        self.sessions: set[Session] = set()
        self.outbound_bytes = 0
        """Bytes queued for writing on every session together (see :meth:`make_room`)."""
        self.streams: dict[str, Stream] = {}
        self.accepting = True
        self.listen_addresses: list[str] = []
        self.typescript_addresses: list[str] = []
        """Addresses of transports serving the TypeScript protocol (not in
        :attr:`listen_addresses`, which this daemon's own clients connect to)."""
        self._config = config
        self._local_credential = local_credential
        self._status = status
        self._transports: dict[str, Transport] = {}
        self._channel_protocols: dict[str, ChannelProtocol] = {}
        self._relay_identity = relay_identity
        self._env_password_hash: str | None = None
        resolved = config.resolved
        self.policy = policy_from(resolved)
        self.guard = PasswordGuard()
        self.tokens = app_tokens
        """App tokens (:mod:`paseo.home.app_tokens`), accepted as a password is."""
        self.auth = Authenticator(
            local_credential, resolved.daemon.auth.password, self.guard, self.tokens
        )
        self.register_stream("server", frozenset({"local", "remote"}))

    # ------------------------------------------------------------------ trust

    async def hash_env_password(self) -> None:
        """Hash ``PASEO_PASSWORD`` once at start-up; it then wins over config.json's hash."""
        plain = self._config.resolved.daemon.auth.envPassword
        if plain:
            self._env_password_hash = await asyncio.to_thread(hash_password, plain)
            self.auth = Authenticator(
                self._local_credential, self._env_password_hash, self.guard, self.tokens
            )

    def apply_config(self, resolved: ResolvedConfig) -> None:
        """Apply the live-reloadable trust settings (hostnames, origins, proxies, password)."""
        self.policy = policy_from(resolved)
        password = self._env_password_hash or resolved.daemon.auth.password
        self.auth = Authenticator(self._local_credential, password, self.guard, self.tokens)

    # --------------------------------------------------------- transport host

    @property
    def listen(self) -> str:
        return self._config.resolved.daemon.listen

    def config_section(self, plugin_id: str) -> Any:
        return self.context.config_section(plugin_id)

    @property
    def home(self) -> str:
        return str(self.context.home)

    def http_app(self, path: str) -> AsgiApp | None:
        """See :class:`paseo_hookspecs.http.HttpMountHost`: plugins mount them on the daemon
        (:mod:`paseo.daemon.http_mounts`, which screens them with :meth:`admit`)."""
        context = self.context
        return context.http_app(path) if isinstance(context, HttpMountHost) else None

    def http_forward(self, host: str) -> Forward:
        """See :class:`paseo_hookspecs.http.HttpForwarding`: the daemon's reverse proxy names
        (:mod:`paseo.scripts.proxy`), behind the same ``Host`` allowlist as everything else."""
        context = self.context
        if not isinstance(context, HttpForwarding):
            return None
        decision = context.http_forward(host)
        if decision is not None and not self.policy.forward_allowed(host):
            return 403
        return decision

    async def admit(
        self, facts: PeerFacts, purpose: AdmissionPurpose, *, at_capacity: bool = False
    ) -> Admission:
        """See :meth:`paseo_hookspecs.transport.TransportHost.admit`."""
        if facts.relay:
            return self._admit_relayed(facts, purpose, at_capacity=at_capacity)
        policy = self.policy
        # A repeated Host counts as absent rather than letting one copy vouch for the other.
        host = facts.hosts[0] if len(facts.hosts) == 1 else None
        if not policy.host_allowed(host) or len(facts.origins) > 1:
            return Admission(403)
        origin = facts.origins[0] if facts.origins else None
        observed = Observed(
            transport=facts.transport,
            unix_socket=facts.unix_socket,
            peer=facts.peer,
            client_address=None
            if facts.unix_socket
            else policy.client_address(facts.peer, facts.forwarded_for),
            origin=origin,
        )
        origin_ok = policy.origin_allowed(origin, host)
        cors = origin if origin is not None and origin_ok else None
        if purpose == "public":
            return Admission(200, observed=observed, cors_origin=cors)
        if not origin_ok:
            return Admission(403, observed=observed)
        if purpose == "session" and (not self.accepting or at_capacity):
            return Admission(503, observed=observed)
        local = is_local_client(
            unix_socket=observed.unix_socket, client_address=observed.client_address
        )
        # Behind a trusted proxy every client shares the proxy's address: key on the client.
        peer = observed.client_address or observed.peer or observed.transport
        if facts.unix_socket and facts.credential is None and facts.peer_uid == os.getuid():
            # The kernel vouched for the peer's user: the daemon's own user on its own 0600
            # socket is as trusted as the local credential it could read.
            return Admission(200, kind="local", observed=observed, cors_origin=cors)
        try:
            kind = await self.auth.authenticate(facts.credential, local=local, peer=peer)
        except Throttled as throttled:
            return Admission(429, observed=observed, retry_after=throttled.retry_after)
        if kind is None:
            return Admission(401, observed=observed)
        return Admission(200, kind=kind, observed=observed, cors_origin=cors)

    def _admit_relayed(
        self, facts: PeerFacts, purpose: AdmissionPurpose, *, at_capacity: bool
    ) -> Admission:
        """A connection through the relay: the transport completed the end-to-end handshake
        with the daemon's keypair, whose public half only a paired client holds, so that key
        is the credential (as in the TypeScript daemon, no password is asked). Always
        ``remote``: the relay's clients are never on this machine as far as trust goes."""
        observed = Observed(
            transport=facts.transport,
            unix_socket=False,
            peer=None,
            client_address=None,
            origin=None,
        )
        if purpose == "session" and (not self.accepting or at_capacity):
            return Admission(503, observed=observed)
        if purpose == "public":
            return Admission(200, observed=observed)
        return Admission(200, kind="remote", observed=observed)

    # ----------------------------------------------------------------- channels

    def register_channel_protocol(self, name: str, protocol: ChannelProtocol) -> None:
        """See :class:`paseo_hookspecs.channels.ChannelHost`."""
        self._channel_protocols[name] = protocol

    def unregister_channel_protocol(self, name: str) -> None:
        self._channel_protocols.pop(name, None)

    async def serve_channel(
        self, channel: MessageChannel, facts: PeerFacts, *, limits: SessionLimits
    ) -> None:
        """See :meth:`paseo_hookspecs.channels.ChannelHost.serve_channel`."""

        def open_channel_session(
            kind: str, carried: MessageChannel, observed: Observed, bounds: SessionLimits
        ) -> Session:
            return self.open_session(kind=kind, channel=carried, observed=observed, limits=bounds)

        async def admit(seen: PeerFacts) -> Admission:
            return await self.admit(seen, "session")

        await channels.serve_channel(
            channel,
            facts,
            limits=limits,
            admit=admit,
            protocols=self._channel_protocols,
            open_session=open_channel_session,
        )

    # -------------------------------------------------------------------- relay

    @property
    def relay_settings(self) -> RelaySettings:
        """See :class:`paseo_hookspecs.relay.RelayHost`."""
        relay = self._config.resolved.daemon.relay
        return RelaySettings(
            enabled=relay.enabled, endpoint=relay.endpoint, public_endpoint=relay.publicEndpoint
        )

    def relay_identity(self) -> RelayIdentity:
        if self._relay_identity is None:
            raise RuntimeError("this daemon has no relay identity")
        return self._relay_identity()

    def started_transports(self) -> list[Transport]:
        """The started transports (the status answer asks a relay among them)."""
        return list(self._transports.values())

    def health(self) -> dict[str, Any]:
        return HealthResult(ok=True, version=__version__).model_dump(mode="json")

    async def status(self) -> dict[str, Any]:
        return (await self._status()).model_dump(mode="json")

    # --------------------------------------------------------------- sessions

    def open_session(
        self, *, kind: str, channel: Channel, observed: Observed, limits: SessionLimits
    ) -> Session:
        """A new session for an admitted connection (see :class:`Session`)."""
        session = Session(self, kind=kind, channel=channel, observed=observed, limits=limits)
        self.sessions.add(session)
        log.debug(
            "session %s opened: %s from %s via %s",
            session.id,
            kind,
            observed.client_address,
            observed.transport,
        )
        return session

    def session_ended(self, session: Session) -> None:
        """Forget a session whose connection ended (called by the session)."""
        self.sessions.discard(session)
        log.debug("session %s closed", session.id)

    def outbound_changed(self, delta: int) -> None:
        self.outbound_bytes += delta

    def make_room(self, size: int, limit: int) -> None:
        """See :meth:`paseo.rpc.session.SessionHost.make_room`: the clients holding the most
        unread bytes pay for the total bound, each at most once per call."""
        if self.outbound_bytes + size <= limit:
            return
        for session in sorted(self.sessions, key=lambda s: s.queued_bytes, reverse=True):
            if session.queued_bytes == 0:
                return
            session.shed()
            if self.outbound_bytes + size <= limit:
                return

    # ---------------------------------------------------------------- streams

    def stream_position(self, name: str) -> tuple[frozenset[str], int] | None:
        stream = self.streams.get(name)
        return None if stream is None else (stream.access, stream.seq)

    def register_stream(self, name: str, access: frozenset[str]) -> Stream:
        """Declare a stream sessions may subscribe to (``access``: allowed session kinds)."""
        stream = self.streams.get(name)
        if stream is None:
            stream = Stream(name, access)
            self.streams[name] = stream
        return stream

    def publish(
        self,
        stream: str,
        method: str,
        payload: Mapping[str, Any],
        *,
        model: type[StreamEvent] | None = None,
    ) -> int:
        """Push ``method`` to every session subscribed to ``stream``; returns its ``seq``.

        ``payload`` gets ``stream`` and ``seq`` added (and is validated by ``model`` when
        given). The frame is encoded once and queued on each subscriber; a slow subscriber
        never delays the others (see :mod:`paseo.rpc.session`).
        """
        entry = self.streams.get(stream)
        if entry is None:
            entry = self.register_stream(stream, frozenset({"local", "remote"}))
        entry.seq += 1
        data: BaseModel | dict[str, Any] = {**payload, "stream": stream, "seq": entry.seq}
        if model is not None:
            data = model.model_validate(data)
        text = encode_notification(method, data)
        for session in self.sessions:
            if stream in session.subscriptions:
                session.deliver(stream, text)
        return entry.seq

    # -------------------------------------------------------------- lifecycle

    async def start_transports(self, transports: dict[str, Transport]) -> list[str]:
        """Start every transport; on a failure stop those already started and re-raise."""
        for name, transport in transports.items():
            try:
                addresses = await transport.start(self)
            except BaseException:
                await self._stop_transports()
                raise
            self._transports[name] = transport
            if transport.typescript_discovery:
                self.typescript_addresses.extend(addresses)
            else:
                self.listen_addresses.extend(addresses)
            log.info("transport %s listening on %s", name, ", ".join(addresses))
        return self.listen_addresses

    async def stop(self, grace: float = DRAIN_TIMEOUT) -> None:
        """Stop accepting calls, finish or fail the ones in flight, close every connection,
        stop the transports."""
        self.accepting = False
        sessions = list(self.sessions)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(s.drain_calls() for s in sessions)), grace)
        for session in sessions:
            session.fail_calls()
        # Let cancelled calls enqueue their shutting_down answers before the goodbye.
        await asyncio.sleep(0)
        self.publish(
            "server", "server.shuttingDown", {"reason": "daemon stopping"}, model=ShuttingDownEvent
        )
        for session in sessions:
            session.close(CLOSE_GOING_AWAY, CLOSE_CODES[CLOSE_GOING_AWAY])
        await self._stop_transports()
        self.guard.close()

    async def _stop_transports(self) -> None:
        for name, transport in list(self._transports.items()):
            try:
                await transport.stop()
            except Exception:
                log.exception("transport %s failed to stop", name)
            self._transports.pop(name, None)


def policy_from(resolved: ResolvedConfig) -> AccessPolicy:
    daemon = resolved.daemon
    return AccessPolicy(
        hostnames=daemon.hostnames,
        allowed_origins=daemon.cors.allowedOrigins,
        trusted_proxies=daemon.trustedProxies,
        loopback_listener=_listens_on_loopback(daemon.listen),
    )


def _listens_on_loopback(listen: str) -> bool:
    """Whether every peer of ``daemon.listen`` is this machine (a unix socket or a loopback
    address); an address that does not parse counts as not (start-up refuses it anyway)."""
    try:
        return parse_address(listen).is_loopback
    except AddressError:
        return False
