"""The running daemon: the state it owns and the services it runs.

:class:`Daemon` implements :class:`paseo_hookspecs.context.DaemonContext` for plugins. What it
runs is decided by the composition root (:mod:`paseo.daemon.wiring`), handed to
:meth:`Daemon.start`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo import __version__
from paseo.daemon.http_mounts import HttpMounts
from paseo.daemon.options import DaemonOptions, StartupError
from paseo.home import HomeLayout, meta, read_pid_file
from paseo.redaction import Redactor, build_redactor

if TYPE_CHECKING:
    from paseo_hookspecs.agents import Agents
    from paseo_hookspecs.http import AsgiApp, Forward
    from paseo_hookspecs.interfaces.store import Store
    from paseo_hookspecs.mcp_tools import McpTool
    from paseo_hookspecs.notifications import NotificationSink
    from paseo_hookspecs.plugin_records import PluginRecordRepository
    from paseo_hookspecs.providers import ProviderCatalog
    from paseo_hookspecs.relay import RelayIdentity
    from paseo_hookspecs.schedules import ScheduleControl
    from paseo_hookspecs.terminal_control import TerminalControl
    from paseo_hookspecs.voice import VoiceOutput
    from paseo_hookspecs.workspaces import WorktreeControl

    from paseo.config import LoadedConfig, ResolvedConfig
    from paseo.daemon.services import Composition, PluginPorts, Service
    from paseo.plugins import PaseoPluginManager
    from paseo.rpc.models import RelayInfo, StatusResult
    from paseo.rpc.server import RpcServer

log = logging.getLogger("paseo.daemon")


class LiveConfig:
    """The daemon's :class:`paseo.services.ConfigView`: always the configuration in force,
    including after ``paseo reload`` replaced it."""

    __slots__ = ("_daemon",)

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    @property
    def resolved(self) -> ResolvedConfig:
        return self._daemon.config.resolved


class Daemon:
    """One daemon process bound to one state root (whose lock the caller holds)."""

    def __init__(self, layout: HomeLayout, options: DaemonOptions, config: LoadedConfig) -> None:
        self.layout = layout
        self.options = options
        self.config = config
        self.launch_document = config.document
        """config.json as this process started with it: a reload reports what changed since."""
        self.started_monotonic = time.monotonic()
        self.stop_requested: asyncio.Event | None = None
        self.plugins: PaseoPluginManager | None = None
        self._store: Store | None = None
        self._agents: Agents | None = None
        self._server_id = ""
        self.local_credential = ""
        self.listen_addresses: list[str] = []
        self.rpc: RpcServer | None = None
        self.services: list[Service] = []
        self.live_config = LiveConfig(self)
        self.config_lock = asyncio.Lock()
        """Serialises config.patch and config.reload."""
        self.http_mounts = HttpMounts(
            lambda: self.rpc, lambda: [*self.listen_addresses, self.config.resolved.daemon.listen]
        )
        """Plugins' HTTP apps (:class:`paseo_hookspecs.http.HttpMounting`)."""
        self.plugin_ports: PluginPorts | None = None
        self.redactor: Redactor | None = build_redactor(config.redaction, options.env)
        """``daemon.redaction``: applied to timeline entries and log records (read at start)."""
        self._forward: Callable[[str], Forward] | None = None
        self._mcp_tools: tuple[McpTool, ...] | None = None

    # -------------------------------------------------------- DaemonContext

    @property
    def home(self) -> Path:
        return self.layout.root

    @property
    def server_id(self) -> str:
        return self._server_id

    @property
    def version(self) -> str:
        return __version__

    @property
    def log(self) -> logging.Logger:
        return log

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the store is not open yet")
        return self._store

    @property
    def agents(self) -> Agents:
        if self._agents is None:
            raise RuntimeError("the agent service is not composed yet")
        return self._agents

    # The narrow ports beside the agents (paseo_hookspecs.providers, .schedules, .workspaces,
    # .terminal_control, .voice, .http): set by the composition root.

    def _ports(self) -> PluginPorts:
        if self.plugin_ports is None:
            raise RuntimeError("the daemon is not composed yet")
        return self.plugin_ports

    @property
    def providers(self) -> ProviderCatalog:
        return self._ports().providers

    @property
    def schedules(self) -> ScheduleControl:
        return self._ports().schedules

    @property
    def worktrees(self) -> WorktreeControl:
        return self._ports().worktrees

    @property
    def terminals(self) -> TerminalControl:
        return self._ports().terminals

    @property
    def voice(self) -> VoiceOutput:
        return self._ports().voice

    @property
    def mcp_tools(self) -> tuple[McpTool, ...]:
        """The tools plugins registered (:class:`paseo_hookspecs.mcp_tools.McpToolSource`),
        collected once, on first use: the MCP server asks when it is built (a plugin's tools
        import their modules and input models, which a start that serves no MCP never needs)."""
        if self._mcp_tools is None:
            self._mcp_tools = tuple(self.plugins.mcp_tools()) if self.plugins is not None else ()
        return self._mcp_tools

    def mount_http(self, path: str, app: AsgiApp) -> Callable[[], None]:
        return self.http_mounts.mount_http(path, app)

    def http_url(self, path: str) -> str | None:
        return self.http_mounts.http_url(path)

    def http_app(self, path: str) -> AsgiApp | None:
        return self.http_mounts.http_app(path)

    def http_forward(self, host: str) -> Forward:
        """See :class:`paseo_hookspecs.http.HttpForwarding` (the scripts proxy decides)."""
        return self._forward(host) if self._forward is not None else None

    @property
    def notification_sinks(self) -> list[NotificationSink]:
        """:class:`paseo_hookspecs.notifications.NotificationSinkSource`."""
        daemon = self.config.config.daemon
        return list(daemon.notifications or []) if daemon is not None else []

    def config_section(self, plugin_id: str) -> Any:
        # One entry, not ``plugin_entries`` (every plugin's dumped): plugins ask per event.
        entry = self.config.resolved.plugins.get(plugin_id)
        if entry is None:
            return None
        return entry.model_dump(mode="json", exclude_unset=True).get("settings")

    def plugin_records(self, plugin_id: str, collection: str) -> PluginRecordRepository:
        """See :meth:`paseo_hookspecs.context.DaemonContext.plugin_records`."""
        from paseo_hookspecs.errors import Unavailable

        records = self.store.plugin_records
        if records is None:
            raise Unavailable(f"the {self.store.name} store driver keeps no plugin records")
        return records.collection(plugin_id, collection)

    # ------------------------------------------------------------ lifecycle

    @classmethod
    def prepare(cls, layout: HomeLayout, options: DaemonOptions) -> Daemon:
        """Synchronous start-up under the lock: config, logging, meta files.

        Raises :class:`StartupError` (having written nothing; a dead daemon's credential is
        removed) when config.json is invalid or a live daemon without an OS lock owns the home.
        """
        from paseo.config import ConfigError, load_config
        from paseo.config.load import materialize_new_home
        from paseo.logs import configure_logging

        owner = meta.live_legacy_owner(layout)
        if owner is not None:
            raise StartupError(
                f"a Paseo daemon (pid {owner.get('pid')}) is running on {layout.root} "
                "without an OS lock; stop it first"
            )
        # We hold the lock and no lock-less daemon runs: temporary files of the kernel's home
        # files were left by killed writers (a daemon, a `config set`), and go before any write.
        meta.sweep_leftovers(layout)
        # We hold the lock and no other daemon runs here: a credential on disk is a dead
        # daemon's (killed before its clean-up). It opens nothing, but it is a secret that
        # outlived its use, and it must not stay if this start fails too.
        meta.delete_local_credential(layout)
        # An OSError here is a home it cannot write (full disk, read-only): reported as every
        # other write of the home is, with what to do (bootstrap.describe_failure).
        materialize_new_home(layout.config)
        try:
            config = load_config(layout.config, env=options.env, home=layout.root)
        except ConfigError as exc:
            raise StartupError(str(exc)) from exc
        # We hold the lock, so a marker still on disk was left by a daemon that died.
        stale = read_pid_file(layout.pid)
        daemon = cls(layout, options, config)
        log_settings = config.logging(foreground=options.foreground)
        configure_logging(**log_settings, redactor=daemon.redactor)
        if stale:
            log.warning("replacing stale paseo.pid left by pid %s", stale.get("pid"))
        for warning in config.warnings:
            log.warning("config.json: %s", warning)
        daemon._server_id = meta.load_or_create_server_id(layout, options.env)
        # Made before any plugin starts: plugins read its public key from the file (the Hub
        # sends it when enrolling).
        meta.load_or_create_keypair(layout)
        meta.write_pid_file(layout, meta.pid_info(home=layout.root, version=__version__))
        daemon.local_credential = meta.rotate_local_credential(layout)
        return daemon

    async def start(self, compose: Callable[[Daemon], Composition]) -> None:
        """Load plugins, open the store, start what ``compose`` builds, then serve."""
        from paseo.plugins import LoadPolicy, PaseoPluginManager, PluginLoadError

        manager = PaseoPluginManager(
            LoadPolicy.from_environment(
                plugins_enabled=self.config.plugins_enabled,
                entries=self.config.plugin_entries,
                env=self.options.env,
            )
        )
        try:
            manager.load_all()
        except PluginLoadError as exc:
            raise StartupError(str(exc)) from exc
        self.plugins = manager
        for record in manager.records:
            if record.unavailable is not None:
                what = "plugin" if record.kind == "hooks" else f"{record.kind} driver"
                log.warning("%s %s is %s", what, record.name, record.unavailable.message)
        self._check_config(manager)
        await self._open_store()
        composition = compose(self)
        self._agents = composition.agents
        self.plugin_ports = composition.plugin_ports
        self._forward = composition.forward
        for service in composition.services:
            await service.start()
            self.services.append(service)
        manager.startup(self)
        await self._start_rpc(composition)
        from paseo.daemon.services import SERVING_HOOK

        for service in self.services:
            serving = getattr(service, SERVING_HOOK, None)
            if serving is not None:
                await serving()
        await self.store.serving()
        log.info(
            "paseo %s started on %s (pid file %s, host %s)",
            __version__,
            self.layout.root,
            self.layout.pid,
            socket.gethostname(),
        )

    def _check_config(self, manager: PaseoPluginManager) -> None:
        """Refuse to start on what only the loaded plugins can judge (their settings, the store
        driver); the same check guards every config write, so a file they accepted passes."""
        from paseo.config import ConfigError
        from paseo.config.startup import startup_problems

        problems = startup_problems(
            self.config.config, self.config.resolved, self.options.env, manager=manager
        )
        if any(problem.severity == "error" for problem in problems):
            raise StartupError(str(ConfigError(self.layout.config, problems)))
        for problem in problems:
            log.warning("config.json: %s", problem)

    async def _start_rpc(self, composition: Composition) -> None:
        """Serve the wire protocol on every registered transport; record where in paseo.pid.

        Raises :class:`StartupError` when a transport cannot listen.
        """
        from paseo.home.app_tokens import AppTokens
        from paseo.rpc.address import parse_address
        from paseo.rpc.server import RpcServer

        server = RpcServer(
            self,
            config=self.live_config,
            local_credential=self.local_credential,
            status=self.status,
            app_tokens=AppTokens(self.layout.app_tokens),
            relay_identity=self._relay_identity,
        )
        await server.hash_env_password()
        for owner, group in composition.groups:
            server.methods.add_group(group, owner)
        # Streams services declared while starting exist before any client can subscribe.
        composition.publisher.attach(server)
        self.rpc = server
        transports = self.plugins.transports() if self.plugins is not None else {}
        try:
            await server.start_transports(transports)
        except OSError as exc:
            raise StartupError(f"cannot listen on {exc.strerror or exc}") from exc
        if not transports:
            log.warning("no transport is registered: the daemon accepts no connections")
        self.listen_addresses = list(server.listen_addresses)
        info = read_pid_file(self.layout.pid) or meta.pid_info(
            home=self.layout.root, version=__version__
        )
        # paseo.pid keeps the TypeScript form (host:port or a socket path) of the first address.
        first = self.listen_addresses[0] if self.listen_addresses else None
        rpc_listen = parse_address(first).listen_form() if first else None
        info["rpcListen"] = rpc_listen
        # The TypeScript CLI reads ``listen`` and uses it only when it names a socket: point it
        # at the TypeScript-protocol socket when one is served (this daemon's clients read
        # ``rpcListen`` first).
        ts_socket = next(
            (a for a in server.typescript_addresses if parse_address(a).path is not None), None
        )
        info["listen"] = parse_address(ts_socket).listen_form() if ts_socket else rpc_listen
        await asyncio.to_thread(meta.write_pid_file, self.layout, info)

    def _relay_identity(self) -> RelayIdentity:
        """The relay identity, read again each time: a rotated keypair holds at once."""
        from paseo_hookspecs.relay import RelayIdentity as Identity

        keypair = meta.load_or_create_keypair(self.layout)
        return Identity(self.server_id, keypair.public_key, keypair.secret_key)

    def _relay_info(self) -> RelayInfo:
        from paseo_hookspecs.relay import RelayReporter

        from paseo.rpc.models import RelayInfo as Info

        relay = self.config.resolved.daemon.relay
        server = self.rpc
        for transport in server.started_transports() if server is not None else []:
            if isinstance(transport, RelayReporter):
                found = transport.relay_status()
                return Info(
                    state=found.state,
                    endpoint=found.endpoint,
                    clients=found.clients,
                    lastError=found.last_error,
                )
        note = "no relay transport is installed" if relay.enabled else None
        return Info(state="off", endpoint=relay.endpoint if relay.enabled else None, lastError=note)

    async def status(self) -> StatusResult:
        """The ``server.status`` answer (also ``GET /api/status``)."""
        from paseo.daemon.status_sections import gather_sections
        from paseo.rpc.models import PROTOCOL_VERSION, Counts, PluginFailure, PluginSummary
        from paseo.rpc.models import StatusResult as Result

        server = self.rpc
        sessions = list(server.sessions) if server is not None else []
        records = list(self.plugins.records) if self.plugins is not None else []
        by_kind: dict[str, int] = {}
        for session in sessions:
            by_kind[session.kind] = by_kind.get(session.kind, 0) + 1
        agents: int | None
        try:
            agents = await self.store.agents.count()
        except Exception:  # noqa: BLE001 - a store that cannot count still reports the rest
            agents = None
        started = (read_pid_file(self.layout.pid) or {}).get("startedAt")
        sections = await gather_sections(
            self.plugins.status_sections() if self.plugins is not None else []
        )
        return Result(
            serverId=self.server_id,
            version=__version__,
            protocolVersion=PROTOCOL_VERSION,
            pid=os.getpid(),
            home=str(self.home),
            hostname=socket.gethostname(),
            startedAt=started if isinstance(started, str) else None,
            uptimeSeconds=round(time.monotonic() - self.started_monotonic, 3),
            listen=list(server.listen_addresses) if server is not None else [],
            storageDriver=self.config.resolved.storage.driver,
            plugins=PluginSummary(
                loaded=[r.name for r in records if r.loaded],
                failed=[
                    PluginFailure(name=r.name, error=r.error)
                    for r in records
                    if r.error is not None
                ],
            ),
            counts=Counts(
                connections=len(sessions),
                sessions=by_kind,
                subscriptions=sum(len(s.subscriptions) for s in sessions),
                methods=len(server.methods) if server is not None else 0,
                agents=agents,
            ),
            sections=sections,
            relay=self._relay_info(),
        )

    async def _open_store(self) -> None:
        """Open the configured store driver (recovery runs inside ``open``)."""
        from paseo_hookspecs import STORE_GROUP
        from paseo_hookspecs.errors import PaseoError

        from paseo.plugins.drivers import load_driver

        name = self.config.store_driver
        try:
            driver = load_driver(STORE_GROUP, name)
            store = driver(self.layout.root, None)
            await store.open()
            # Its background work (the JSON index check) waits until the daemon serves.
            store.hold_background()
        except PaseoError as exc:
            raise StartupError(f"cannot open the {name!r} store: {exc.message}") from exc
        except OSError as exc:
            raise StartupError(f"cannot open the {name!r} store: {exc}") from exc
        for item in store.quarantined:
            log.warning("quarantined %s -> %s: %s", item.original, item.moved_to, item.reason)
        self._store = store

    async def shutdown(self) -> None:
        """Stop services, flush state, delete the credential and the pid marker.

        The credential goes as soon as no transport listens (nothing can present it any
        more), before the services stop: stopping agents can take long enough on a loaded
        machine for whoever sent SIGTERM to give up and SIGKILL. Every later step runs even
        when one before it raised.
        """
        try:
            if self.rpc is not None:
                # Stop accepting, finish or fail calls in flight, close connections and
                # transports while the store is still open.
                await self.rpc.stop()
        finally:
            meta.delete_local_credential(self.layout)
            try:
                await self._stop_services()
            finally:
                meta.remove_pid_file(self.layout)
        log.info("paseo stopped")

    async def _stop_services(self) -> None:
        try:
            if self.plugins is not None:
                self.plugins.shutdown(self)
        finally:
            while self.services:
                service = self.services.pop()
                try:
                    await service.stop()
                except Exception:
                    log.exception("service %s failed to stop cleanly", service.name)
            if self._store is not None:
                store, self._store = self._store, None
                await store.close()
