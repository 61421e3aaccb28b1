"""The caller rules (docs/mcp.md, "Caller rules").

* A child created through the tools gets :data:`~paseo_mcp.caller.PARENT_LABEL`, works in the
  caller's directory and starts in the caller's mode, mapped across providers by access level.
* A caller reaches itself and the agents it created, and no other agent unless the user's
  ``callerScope`` widens that to its workspace's agents or to every agent. Anything outside is
  ``access_denied``.
* A schedule or worktree is in reach when the agent that created it is (:mod:`paseo_mcp.owners`
  records it); one no agent created (the user's) only with ``callerScope: all``.
* No agent is set to a mode above the caller's own current access level.
* A permission request of another agent needs a person unless ``childPermissions`` is
  ``parent``.
* An agent's terminals are its workspace's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from paseo_hookspecs.agents import AgentQuery
from paseo_hookspecs.errors import AccessDenied, NotFound, PaseoError
from paseo_hookspecs.interfaces.agent import ModeAccess, ModeInfo
from paseo_hookspecs.records import AgentRecord

from paseo_mcp.caller import PARENT_LABEL, McpCaller
from paseo_mcp.daemon import Ports
from paseo_mcp.mode_mapping import LEVELS, mapped_mode

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

    async def reaches_owned(self, caller: McpCaller, owner: str | None) -> bool:
        """Whether the caller reaches a schedule or worktree ``owner`` created (``None``: no
        agent did)."""
        if self.scope() == "all":
            return True
        if owner is None:
            return False
        if owner == caller.agent_id:
            return True
        try:
            record = await self._ports.agents.get(owner)
        except PaseoError:
            return False
        return self.reaches_record(caller, record)

    def answers_for(self, caller: McpCaller, agent_id: str) -> None:
        """Refuse answering another agent's permission request unless the user allows it."""
        if agent_id == caller.agent_id or self._ports.settings().childPermissions == "parent":
            return
        raise AccessDenied(
            f"a person must answer the permission requests of agent {agent_id}: ask the user "
            'to answer it (or to set plugins.mcp.settings.childPermissions to "parent")'
        )

    async def _modes(self, provider: str) -> list[ModeInfo]:
        catalog = self._ports.need_providers()
        async with asyncio.timeout(MODE_LISTING_TIMEOUT):
            return await catalog.modes(provider)

    async def level(self, provider: str, mode: str | None) -> ModeAccess | None:
        if not mode:
            return None
        try:
            modes = await self._modes(provider)
        except (PaseoError, OSError, TimeoutError) as exc:
            log.info("no modes of %s to compare: %s", provider, exc)
            return None
        return next((m.access for m in modes if m.id == mode), None)

    async def current_mode(self, caller: McpCaller) -> str | None:
        try:
            record = await self._ports.agents.get(caller.agent_id)
        except PaseoError:
            return None
        return record.lastModeId or (record.config.modeId if record.config else None)

    async def check_mode(self, caller: McpCaller, provider: str, mode: str) -> None:
        """Refuse ``mode`` (of ``provider``) when it is above the caller's own current access
        level, or when the two cannot be compared (a mode without a level)."""
        own = await self.current_mode(caller)
        if provider == caller.provider and mode == own:
            return
        mine = await self.level(caller.provider, own)
        wanted = await self.level(provider, mode)
        if mine is not None and wanted is not None and LEVELS.index(wanted) <= LEVELS.index(mine):
            return
        if mine is None:
            why = f"your own mode ({own or 'the default'}) has no access level to compare with"
        elif wanted is None:
            why = f"mode {mode!r} of {provider} has no access level to compare with yours"
        else:
            why = f"its access level ({wanted}) is above your own ({mine}, mode {own})"
        raise AccessDenied(f"you may not set mode {mode!r}: {why}")

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
