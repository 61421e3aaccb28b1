"""The daemon's kernel services and how they plug into its lifecycle.

A service owns one area of state (projects and workspaces, agents, schedules, …): it is built
by the composition root (:mod:`paseo.daemon.wiring`) once the store is open, starts in list
order and stops in reverse, before the store closes. Its RPC adapter is wired next to it by
the root; the service itself knows nothing of the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from paseo_hookspecs.agents import Agents
    from paseo_hookspecs.http import Forward
    from paseo_hookspecs.providers import ProviderCatalog
    from paseo_hookspecs.registration import LazyRpcMethodGroup, RpcMethodGroup
    from paseo_hookspecs.schedules import ScheduleControl
    from paseo_hookspecs.terminal_control import TerminalControl
    from paseo_hookspecs.voice import VoiceOutput
    from paseo_hookspecs.workspaces import WorktreeControl

    from paseo.daemon.publisher import ForwardingPublisher


class Service(Protocol):
    """What the daemon expects of a kernel service."""

    name: str

    async def start(self) -> None:
        """Recover and start background work; the store is open."""

    async def stop(self) -> None:
        """Stop background work and release resources; the store is still open."""


SERVING_HOOK = "serving"
"""Optional ``async def serving(self) -> None`` on a service: called once the transports
listen, before the daemon reports ready. Work that can wait for the first client — warming
caches, importing provider modules — belongs in a task started here.
"""


@dataclass
class Composition:
    """Everything the composition root built for one daemon run."""

    publisher: ForwardingPublisher
    """The one :class:`paseo.services.Publisher` every service got; attach it to the server."""
    services: list[Service] = field(default_factory=list)
    """Kernel services in start order."""
    groups: list[tuple[str, RpcMethodGroup | LazyRpcMethodGroup]] = field(default_factory=list)
    """``(owner, group)``: the kernel's, every service adapter's (owner ``kernel``), then the
    plugins'."""
    agents: Agents | None = None
    """The agent port (``DaemonContext.agents``) over the agent service."""
    plugin_ports: PluginPorts | None = None
    """The narrow ports plugins find on the daemon beside :attr:`agents`."""
    forward: Callable[[str], Forward] | None = None
    """The reverse proxy's decision for a connection's ``Host`` (the scripts room)."""


@dataclass(frozen=True)
class PluginPorts:
    """The kernel's implementations of the contract's narrow ports (docs/plugins.md)."""

    providers: ProviderCatalog
    schedules: ScheduleControl
    worktrees: WorktreeControl
    terminals: TerminalControl
    voice: VoiceOutput
