"""TEMPORARY: builds the terminals service from today's ``factory(daemon)`` service list.

The composition root being written in :mod:`paseo.daemon` replaces this module: it builds
:class:`TerminalService` with its ports, binds the adapter's :class:`ServiceRef` and registers
:func:`paseo.terminals.rpc.method_groups`. Until then this module adapts the daemon to those
ports (a publisher over ``daemon.rpc``, the workspaces service's provisioning as placement).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.records import WorkspaceRecord

from paseo.services import ServiceRef
from paseo.terminals.profiles import no_provider_profiles
from paseo.terminals.rpc import method_groups, notifications
from paseo.terminals.service import TerminalService

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup

    from paseo.config import ResolvedConfig
    from paseo.daemon.runtime import Daemon

__all__ = ["create", "notifications", "rpc_groups"]


class _DaemonPublisher:
    """Publishes through ``daemon.rpc`` once it exists; streams declared earlier are
    remembered and declared when the transports listen."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon
        self._early: dict[str, frozenset[str]] = {}

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        rpc = self._daemon.rpc
        if rpc is None:
            self._early[name] = access
        else:
            rpc.register_stream(name, access)

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        rpc = self._daemon.rpc
        if rpc is not None:
            rpc.publish(stream, method, dict(payload))

    def serving(self) -> None:
        for name, access in self._early.items():
            self.register_stream(name, access)
        self._early.clear()


class _DaemonConfig:
    """The config in force: ``paseo reload`` replaces ``daemon.config`` itself."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    @property
    def resolved(self) -> ResolvedConfig:
        return self._daemon.config.resolved


class _DaemonPlacement:
    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    async def ensure_workspace_for_cwd(self, cwd: str) -> WorkspaceRecord:
        from paseo.workspaces.service import provisioning_of

        return await provisioning_of(self._daemon).ensure_workspace_for_cwd(cwd)


class _LegacyTerminals:
    name = "terminals"

    def __init__(self, daemon: Daemon) -> None:
        self._publisher = _DaemonPublisher(daemon)
        self.service = TerminalService(
            store=daemon.store,
            publisher=self._publisher,
            config=_DaemonConfig(daemon),
            placement=_DaemonPlacement(daemon),
            profiles=no_provider_profiles,
        )
        self._ref: ServiceRef[TerminalService] = ServiceRef("terminals")
        self._ref.bind(self.service)

    def rpc_groups(self) -> list[RpcMethodGroup]:
        return method_groups(self._ref)

    async def start(self) -> None:
        await self.service.start()

    async def serving(self) -> None:
        self._publisher.serving()

    async def stop(self) -> None:
        await self.service.stop()


def create(daemon: Daemon) -> _LegacyTerminals:
    """Service factory (see :mod:`paseo.daemon.services`)."""
    return _LegacyTerminals(daemon)


def rpc_groups() -> list[RpcMethodGroup]:
    """The ``terminal`` group for the protocol schema (an unbound ref)."""
    return method_groups(ServiceRef("terminals"))
