"""The daemon's RPC hub: methods, sessions, streams, trust, and the transports that feed it.

:func:`start_rpc` builds it when the daemon starts (kernel and plugin method groups, then every
registered transport) and :meth:`RpcServer.stop` takes it down: refuse new calls, let calls in
flight finish (bounded), fail the rest, say goodbye, close connections, stop transports.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from paseo import __version__
from paseo.rpc.dispatch import MethodTable, encode_notification
from paseo.rpc.models import (
    PROTOCOL_VERSION,
    Counts,
    HealthResult,
    PluginFailure,
    PluginSummary,
    ShuttingDownEvent,
    StatusResult,
    StreamEvent,
)
from paseo.rpc.session import (
    CLOSE_CODES,
    CLOSE_GOING_AWAY,
    Channel,
    Observed,
    Session,
    SessionLimits,
)
from paseo.rpc.trust import AccessPolicy, Authenticator, hash_password, is_local_client

if TYPE_CHECKING:
    from paseo_hookspecs.interfaces.transport import Transport

    from paseo.config import ResolvedConfig
    from paseo.daemon.runtime import Daemon

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
    """See the module docstring. One per daemon, reachable as ``daemon.rpc``."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.methods = MethodTable()
        self.sessions: set[Session] = set()
        self.streams: dict[str, Stream] = {}
        self.accepting = True
        self.listen_addresses: list[str] = []
        self.started_at = time.time()
        self._transports: dict[str, Transport] = {}
        self._env_password_hash: str | None = None
        self.config_lock = asyncio.Lock()
        """Serialises config.patch and config.reload."""
        resolved = daemon.config.resolved
        self.policy = policy_from(resolved)
        self.auth = Authenticator(daemon.local_credential, resolved.daemon.auth.password)
        self.register_stream("server", frozenset({"local", "remote"}))
        self.register_stream("config", frozenset({"local", "remote"}))

    # ------------------------------------------------------------------ trust

    async def hash_env_password(self) -> None:
        """Hash ``PASEO_PASSWORD`` once at start-up; it then wins over config.json's hash."""
        plain = self.daemon.config.resolved.daemon.auth.envPassword
        if plain:
            self._env_password_hash = await asyncio.to_thread(hash_password, plain)
            self.auth = Authenticator(self.daemon.local_credential, self._env_password_hash)

    def apply_config(self, resolved: ResolvedConfig) -> None:
        """Apply the live-reloadable trust settings (hostnames, origins, proxies, password)."""
        self.policy = policy_from(resolved)
        password = self._env_password_hash or resolved.daemon.auth.password
        self.auth = Authenticator(self.daemon.local_credential, password)

    async def authenticate(
        self, token: str | None, *, unix_socket: bool, client_address: str | None
    ) -> str | None:
        """The session kind for a connection, or ``None`` to refuse it."""
        local = is_local_client(unix_socket=unix_socket, client_address=client_address)
        return await self.auth.authenticate(token, local=local)

    # --------------------------------------------------------------- sessions

    def open_session(
        self, *, kind: str, channel: Channel, observed: Observed, limits: SessionLimits
    ) -> Session:
        """A new session for an authenticated connection (see :class:`Session`)."""
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

    def close_session(self, session: Session) -> None:
        """Forget a session whose connection ended."""
        session.connection_lost()
        self.sessions.discard(session)
        log.debug("session %s closed", session.id)

    # ---------------------------------------------------------------- streams

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
        payload: dict[str, Any],
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

    # ----------------------------------------------------------------- status

    def health(self) -> HealthResult:
        return HealthResult(ok=True, version=__version__)

    async def status(self) -> StatusResult:
        daemon = self.daemon
        plugins = daemon.plugins
        records = list(plugins.records) if plugins is not None else []
        by_kind: dict[str, int] = {}
        for session in self.sessions:
            by_kind[session.kind] = by_kind.get(session.kind, 0) + 1
        agents: int | None
        try:
            agents = await daemon.store.agents.count()
        except Exception:  # noqa: BLE001 - a store that cannot count still reports the rest
            agents = None
        started = _pid_started_at(daemon)
        return StatusResult(
            serverId=daemon.server_id,
            version=__version__,
            protocolVersion=PROTOCOL_VERSION,
            pid=os.getpid(),
            home=str(daemon.home),
            hostname=socket.gethostname(),
            startedAt=started,
            uptimeSeconds=round(time.monotonic() - daemon.started_monotonic, 3),
            listen=list(self.listen_addresses),
            storageDriver=daemon.config.resolved.storage.driver,
            plugins=PluginSummary(
                loaded=[r.name for r in records if r.loaded],
                failed=[
                    PluginFailure(name=r.name, error=r.error)
                    for r in records
                    if r.error is not None
                ],
            ),
            counts=Counts(
                connections=len(self.sessions),
                sessions=by_kind,
                subscriptions=sum(len(s.subscriptions) for s in self.sessions),
                methods=len(self.methods),
                agents=agents,
            ),
        )

    # -------------------------------------------------------------- lifecycle

    async def start_transports(self, transports: dict[str, Transport]) -> list[str]:
        """Start every transport; on a failure stop those already started and re-raise."""
        for name, transport in transports.items():
            try:
                addresses = await transport.start(self.daemon)
            except BaseException:
                await self._stop_transports()
                raise
            self._transports[name] = transport
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
    )


def _pid_started_at(daemon: Daemon) -> str | None:
    from paseo.home import read_pid_file

    info = read_pid_file(daemon.layout.pid) or {}
    started = info.get("startedAt")
    return started if isinstance(started, str) else None


async def start_rpc(daemon: Daemon) -> RpcServer:
    """Build the RPC server: kernel and plugin method groups, then start every transport.

    Raises :class:`paseo.daemon.bootstrap.StartupError` when a transport cannot listen.
    """
    from paseo.daemon.bootstrap import StartupError
    from paseo.rpc.kernel import kernel_groups

    server = RpcServer(daemon)
    await server.hash_env_password()
    for group in kernel_groups():
        server.methods.add_group(group, "kernel")
    for service in daemon.services:
        for group in service.rpc_groups():
            server.methods.add_group(group, "kernel")
    plugins = daemon.plugins
    if plugins is not None:
        for owner, group in plugins.rpc_method_groups():
            server.methods.add_group(group, owner)
        transports = plugins.transports()
    else:
        transports = {}
    # Transports reach the hub through the daemon while starting.
    daemon.rpc = server
    try:
        await server.start_transports(transports)
    except OSError as exc:
        raise StartupError(f"cannot listen on {exc.strerror or exc}") from exc
    if not transports:
        log.warning("no transport is registered: the daemon accepts no connections")
    return server
