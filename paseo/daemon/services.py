"""The daemon's kernel services and how they plug into its lifecycle.

A service owns one area of state (projects and workspaces, agents, schedules, …): it starts
after the store is open, contributes RPC method groups, and stops before the store closes.
Services start in list order and stop in reverse.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from paseo_hookspecs.records import WorkspaceRecord
    from paseo_hookspecs.registration import RpcMethodGroup
    from pydantic import BaseModel

    from paseo.agents.manager import AgentService
    from paseo.config import ResolvedConfig
    from paseo.daemon.runtime import Daemon


class Service(Protocol):
    """What the daemon expects of a kernel service."""

    name: str

    def rpc_groups(self) -> list[RpcMethodGroup]:
        """The method groups this service serves (may be empty)."""

    async def start(self) -> None:
        """Recover and start background work; the store is open."""

    async def stop(self) -> None:
        """Stop background work and release resources; the store is still open."""


SERVING_HOOK = "serving"
"""Optional ``async def serving(self) -> None`` on a service: called once the transports
listen (``daemon.rpc`` exists), before the daemon reports ready. Work that can wait for the
first client — warming caches, importing provider modules — belongs in a task started here.
"""


SERVICE_FACTORIES: tuple[str, ...] = (
    "paseo.git.service:create",
    "paseo.workspaces.service:create",
    "paseo.daemon.services:create_agents",
)
"""``module:function`` paths of service factories, each ``factory(daemon) -> Service``, in start
order. Imported only when the daemon starts, never by the CLI."""


# The agent service takes narrow ports instead of the daemon; until the composition root builds
# every service that way, these adapters give it the daemon's (the only place they are made).


class _DaemonPublisher:
    """A :class:`paseo.services.Publisher` over ``daemon.rpc``: events before the RPC server
    exists are dropped, streams registered before it are remembered and declared on it when
    the daemon serves."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon
        self._streams: dict[str, frozenset[str]] = {}

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        self._streams[name] = access
        if self._daemon.rpc is not None:
            self._daemon.rpc.register_stream(name, access)

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        if self._daemon.rpc is not None:
            self._daemon.rpc.publish(stream, method, dict(payload))

    def serving(self) -> None:
        assert self._daemon.rpc is not None
        for name, access in self._streams.items():
            self._daemon.rpc.register_stream(name, access)


class _DaemonConfig:
    """The :class:`paseo.services.ConfigView` of the daemon (``paseo reload`` replaces it)."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    @property
    def resolved(self) -> ResolvedConfig:
        return self._daemon.config.resolved


class _WorkspacePlacement:
    """The workspaces service's placement, looked up when an agent is placed."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    async def ensure_workspace_for_cwd(self, cwd: str) -> WorkspaceRecord:
        from paseo.workspaces.service import provisioning_of

        return await provisioning_of(self._daemon).ensure_workspace_for_cwd(cwd)


class _AgentsEntry:
    """The agent service in the daemon's service list, with its RPC adapter bound."""

    name = "agents"

    def __init__(self, service: AgentService, publisher: _DaemonPublisher) -> None:
        from paseo.services import ServiceRef

        self.service = service
        self._publisher = publisher
        self._ref: ServiceRef[AgentService] = ServiceRef("agents")
        self._ref.bind(service)

    def rpc_groups(self) -> list[RpcMethodGroup]:
        from paseo.agents.rpc import method_groups

        return method_groups(self._ref)

    async def start(self) -> None:
        await self.service.start()

    async def serving(self) -> None:
        self._publisher.serving()
        await self.service.serving()

    async def stop(self) -> None:
        await self.service.stop()


def create_agents(daemon: Daemon) -> Service:
    """The agent service, built with the ports it needs."""
    from paseo.agents.manager import AgentService

    assert daemon.plugins is not None, "plugins load before services are built"
    publisher = _DaemonPublisher(daemon)
    service = AgentService(
        store=daemon.store,
        publisher=publisher,
        config=_DaemonConfig(daemon),
        plugins=daemon.plugins,
        placement=_WorkspacePlacement(daemon),
    )
    return _AgentsEntry(service, publisher)


def rpc_groups() -> list[RpcMethodGroup]:
    """The agent service's method groups, for the protocol schema."""
    from paseo.agents.rpc import method_groups
    from paseo.services import ServiceRef

    return method_groups(ServiceRef("agents"))


def notifications() -> dict[str, type[BaseModel]]:
    """The agent notification models, for the protocol schema."""
    from paseo.agents.rpc import notifications as agent_notifications

    return agent_notifications()


def build_services(daemon: Daemon) -> list[Service]:
    """Construct every kernel service for ``daemon``."""
    services: list[Service] = []
    for path in SERVICE_FACTORIES:
        module_name, _, function = path.partition(":")
        factory = getattr(importlib.import_module(module_name), function)
        services.append(factory(daemon))
    return services


def service_method_groups() -> list[RpcMethodGroup]:
    """Every kernel service's method groups without a running daemon, for the protocol
    schema: a service module may define a module-level ``rpc_groups()`` for this."""
    groups: list[RpcMethodGroup] = []
    for path in SERVICE_FACTORIES:
        module = importlib.import_module(path.partition(":")[0])
        static = getattr(module, "rpc_groups", None)
        if static is not None:
            groups.extend(static())
    return groups


def service_notifications() -> dict[str, type[BaseModel]]:
    """Every kernel service's notification models (method → params model), for the protocol
    schema: a service module may define a module-level ``notifications()`` for this."""
    found: dict[str, type[BaseModel]] = {}
    for path in SERVICE_FACTORIES:
        module = importlib.import_module(path.partition(":")[0])
        static = getattr(module, "notifications", None)
        if static is not None:
            found.update(static())
    return found
