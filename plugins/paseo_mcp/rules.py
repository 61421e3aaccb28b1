"""The caller rules (docs/mcp.md, "Caller rules").

* A child created through the tools gets :data:`~paseo_mcp.caller.PARENT_LABEL`, works in the
  caller's directory and starts in the caller's mode, mapped across providers by access level.
* A caller reaches itself and the agents it created, and no other agent unless the user's
  ``callerScope`` widens that to its workspace's agents or to every agent. Anything outside is
  ``access_denied``.
* An agent's terminals are its workspace's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from paseo_hookspecs.agents import AgentQuery
from paseo_hookspecs.errors import AccessDenied, NotFound, PaseoError
from paseo_hookspecs.records import AgentRecord

from paseo_mcp.caller import PARENT_LABEL, McpCaller
from paseo_mcp.daemon import Ports
from paseo_mcp.mode_mapping import mapped_mode

log = logging.getLogger("paseo.plugins.mcp")

MODE_LISTING_TIMEOUT = 30.0
"""Bound on listing the two providers' modes when a child's mode is mapped."""


class CallerRules:
    def __init__(self, ports: Ports) -> None:
        self._ports = ports

    def scope(self) -> str:
        """``callerScope``, read at every call (a reload applies it at once)."""
        return self._ports.settings().callerScope

    def reaches(
        self,
        caller: McpCaller,
        agent_id: str,
        workspace_id: str | None,
        labels: Mapping[str, str],
    ) -> bool:
        if agent_id == caller.agent_id or labels.get(PARENT_LABEL) == caller.agent_id:
            return True
        scope = self.scope()
        if scope == "all":
            return True
        return (
            scope == "workspace"
            and caller.workspace_id is not None
            and workspace_id == caller.workspace_id
        )

    def reaches_record(self, caller: McpCaller, record: AgentRecord) -> bool:
        return self.reaches(caller, record.id, record.workspaceId, record.labels)

    async def target(self, caller: McpCaller, reference: str) -> AgentRecord:
        """The agent ``reference`` names, when the caller may reach it."""
        try:
            record = await self._ports.agents.get(reference)
        except PaseoError:
            raise NotFound(f"no agent {reference!r}") from None
        if not self.reaches_record(caller, record):
            raise AccessDenied(
                f"agent {record.id} was not created by you ({caller.agent_id}) and "
                f"callerScope ({self.scope()}) does not let you reach it"
            )
        return record

    async def reachable(
        self, caller: McpCaller, *, include_archived: bool, labels: Mapping[str, str]
    ) -> list[AgentRecord]:
        """What ``list_agents`` shows: the caller's children (scope ``created``), or every
        agent in reach (a child in a worktree lives in another workspace, so no single filter
        says it: the page is filtered here)."""
        wanted = dict(labels)
        if self.scope() == "created":
            wanted[PARENT_LABEL] = caller.agent_id
        query = AgentQuery(include_archived=include_archived, labels=wanted)
        page = await self._ports.agents.list(query)
        return [record for record in page.items if self.reaches_record(caller, record)]

    def workspace(self, caller: McpCaller) -> str:
        if caller.workspace_id is None:
            raise AccessDenied("your agent has no workspace to open terminals in")
        return caller.workspace_id

    def own_terminal(self, caller: McpCaller, terminal_id: str) -> str:
        listed = self._ports.need_terminals().list(self.workspace(caller))
        ids = {terminal.get("terminalId") for terminal in listed.get("terminals", [])}
        if terminal_id not in ids:
            raise AccessDenied(f"terminal {terminal_id!r} is not one of your workspace's")
        return terminal_id

    async def inherited_mode(self, caller: McpCaller, provider: str) -> str | None:
        """The mode a child on ``provider`` (empty: the default provider) starts in: the
        caller's current mode, mapped across providers by access level; ``None`` leaves the
        provider's default."""
        try:
            parent = await self._ports.agents.get(caller.agent_id)
        except PaseoError:
            return None
        mode = parent.lastModeId or (parent.config.modeId if parent.config else None)
        catalog = self._ports.providers
        child = provider or (catalog.default_provider() if catalog is not None else None)
        if not mode or not child:
            return None
        if child == caller.provider:
            return mode
        if catalog is None:
            return None
        try:
            async with asyncio.timeout(MODE_LISTING_TIMEOUT):
                parent_modes = await catalog.modes(caller.provider)
                child_modes = await catalog.modes(child)
        except (PaseoError, OSError, TimeoutError) as exc:
            # The create itself says what is wrong with the child's provider.
            log.info("no mode mapped from %s to %s: %s", caller.provider, child, exc)
            return None
        return mapped_mode(mode, parent_modes, child_modes)
