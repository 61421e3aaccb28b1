"""What the agent service needs of other rooms, as narrow Protocols.

The composition root (:mod:`paseo.daemon`) hands the service objects that satisfy these:
the plugin manager (:class:`paseo.plugins.PaseoPluginManager` does, structurally) and the
workspace provisioning service. The shared ports (:class:`paseo.services.Publisher`,
:class:`paseo.services.ConfigView`) and the store come from :mod:`paseo.services` and the
contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from paseo_hookspecs.events import AgentEvent
from paseo_hookspecs.interfaces.agent import AgentProvider
from paseo_hookspecs.records import WorkspaceRecord


class DeclaredProvider(Protocol):
    """A provider a plugin manifest declares (an ``extends: acp`` entry)."""

    def config_entry(self) -> dict[str, Any]:
        """The provider as an ``agents.providers.<id>`` entry of config.json would define it."""


class AgentPlugins(Protocol):
    """The plugin manager, as far as agents are concerned."""

    def providers(self) -> Mapping[str, AgentProvider]:
        """``paseo_register_providers``: providers keyed by id. Called lazily, on first use,
        so provider modules are not imported on the daemon's path to accepting connections."""

    def declared_providers(self) -> Mapping[str, DeclaredProvider]:
        """Providers declared by plugin manifests, keyed by id."""

    def agent_event(self, agent_id: str, provider: str, event: AgentEvent) -> None:
        """The ``paseo_agent_event`` tap (must not raise)."""

    def attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        """The ``paseo_attention`` tap (must not raise)."""


class WorkspacePlacement(Protocol):
    """Where an agent started in a directory belongs (the workspaces service)."""

    async def ensure_workspace_for_cwd(self, cwd: str) -> WorkspaceRecord:
        """The workspace of ``cwd`` (an absolute directory), created when there is none."""

    async def legacy_agents_placed(self) -> None:
        """Return once the agents recorded without a workspace (by an older program) were given
        the one of their cwd: at once unless the boot pass is still to run again after the
        store settled (see :mod:`paseo.workspaces.legacy_agents`)."""
