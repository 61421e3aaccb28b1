"""What plugins add to every session an agent starts: MCP servers and environment.

A :class:`~paseo_hookspecs.agents.SessionContributor` registers through
``AgentControl.add_session_contributor``; :meth:`SessionContributions.extras` asks each of them
when a session is started, resumed or reloaded (never stored in the record). The kernel's
legacy :class:`~paseo.agents.ports.SessionTools` (the MCP host) is asked first, so the
contributors extend what it injects; it goes once the MCP plugin contributes through the port.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paseo_hookspecs.agents import SessionContributor
from paseo_hookspecs.records import AgentRecord

from paseo.agents.ports import SessionTools

log = logging.getLogger("paseo.agents")


@dataclass(frozen=True)
class _Entry:
    contributor: SessionContributor
    include_internal: bool


class SessionContributions:
    """See the module docstring."""

    def __init__(self, tools: SessionTools | None = None) -> None:
        self._tools = tools
        self._entries: list[_Entry] = []

    def add(
        self, contributor: SessionContributor, *, include_internal: bool = False
    ) -> Callable[[], None]:
        entry = _Entry(contributor, include_internal)
        self._entries.append(entry)

        def remove() -> None:
            if entry in self._entries:
                self._entries.remove(entry)

        return remove

    def extras(self, record: AgentRecord) -> tuple[dict[str, Any], dict[str, str]]:
        """``(mcpServers, env)`` every contribution adds to ``record``'s session; a later
        contributor's entry of the same name wins."""
        servers: dict[str, Any] = dict(self._tools.mcp_servers(record)) if self._tools else {}
        env: dict[str, str] = {}
        for entry in list(self._entries):
            if record.internal and not entry.include_internal:
                continue
            try:
                extras = entry.contributor.contribute(record)
            except Exception:
                # One plugin's bug must not keep the agent from starting.
                log.exception(
                    "session contributor %r failed for agent %s", entry.contributor, record.id
                )
                continue
            servers.update(extras.mcp_servers)
            env.update(extras.env)
        return servers, env
