"""TEMPORARY: builds the schedules service from today's ``Daemon`` until the composition root
in :mod:`paseo.daemon` does it (listed in :data:`paseo.daemon.services.SERVICE_FACTORIES`).

Everything daemon-shaped stays in this module: :class:`ScheduleService` itself sees only its
ports (the store, a :class:`~paseo.services.Publisher`, a
:class:`~paseo.schedules.ports.ScheduleAgents`, the config view).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paseo.schedules import rpc
from paseo.schedules.agents_port import AgentServicePort
from paseo.schedules.service import ScheduleService
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup
    from pydantic import BaseModel

    from paseo.agents.manager import AgentService
    from paseo.config import ResolvedConfig
    from paseo.daemon.runtime import Daemon


class _DaemonPublisher:
    """Publishes through ``daemon.rpc`` once it exists (events before that have no
    subscriber and are dropped); streams declared earlier are registered on first use."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon
        self._streams: dict[str, frozenset[str]] = {}

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        self._streams[name] = access
        if self._daemon.rpc is not None:
            self._daemon.rpc.register_stream(name, access)

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        server = self._daemon.rpc
        if server is None:
            return
        if stream not in server.streams and stream in self._streams:
            server.register_stream(stream, self._streams[stream])
        server.publish(stream, method, dict(payload))

    def flush_streams(self) -> None:
        for name, access in self._streams.items():
            self.register_stream(name, access)


class _DaemonConfig:
    """The daemon's config at the moment of use (``paseo reload`` replaces the object)."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    @property
    def resolved(self) -> ResolvedConfig:
        return self._daemon.config.resolved


class LegacyScheduleService:
    """The :class:`paseo.daemon.services.Service` shape around :class:`ScheduleService`."""

    name = "schedules"

    def __init__(self, daemon: Daemon) -> None:
        self._publisher = _DaemonPublisher(daemon)
        self.service = ScheduleService(
            store=daemon.store,
            publisher=self._publisher,
            agents=AgentServicePort(lambda: _agent_service(daemon)),
            config=_DaemonConfig(daemon),
        )
        self.ref: ServiceRef[ScheduleService] = ServiceRef("schedules")
        self.ref.bind(self.service)

    def rpc_groups(self) -> list[RpcMethodGroup]:
        return rpc.method_groups(self.ref)

    async def start(self) -> None:
        await self.service.start()

    async def serving(self) -> None:
        """The RPC server exists now: declare the ``schedules`` stream on it."""
        self._publisher.flush_streams()

    async def stop(self) -> None:
        await self.service.stop()


def _agent_service(daemon: Daemon) -> AgentService:
    from paseo.agents.manager import AgentService

    for service in daemon.services:
        if isinstance(service, AgentService):
            return service
    from paseo_hookspecs.errors import Unavailable

    raise Unavailable("the agents service is not running")


def create(daemon: Daemon) -> LegacyScheduleService:
    """Service factory (see :mod:`paseo.daemon.services`)."""
    return LegacyScheduleService(daemon)


def rpc_groups() -> list[RpcMethodGroup]:
    """The method groups without a daemon (for the protocol schema)."""
    return rpc.method_groups(ServiceRef("schedules"))


def notifications() -> dict[str, type[BaseModel]]:
    return rpc.notifications()
