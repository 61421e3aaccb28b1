"""The daemon's kernel services and how they plug into its lifecycle.

A service owns one area of state (projects and workspaces, agents, schedules, …): it starts
after the store is open, contributes RPC method groups, and stops before the store closes.
Services start in list order and stop in reverse.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup
    from pydantic import BaseModel

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
    "paseo.agents.manager:create",
    "paseo.speech.wiring_legacy:create",
)
"""``module:function`` paths of service factories, each ``factory(daemon) -> Service``, in start
order. Imported only when the daemon starts, never by the CLI."""


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
