"""A plugin that knows agents only through ``DaemonContext.agents``: it writes every callback
it observes to ``$PASEO_HOME/porttest.jsonl`` and allows every permission request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from paseo_hookspecs import hookimpl
from paseo_hookspecs.agents import (
    AgentObserver,
    Agents,
    PermissionAnswer,
    PermissionOutcome,
    RecordChange,
    Subscription,
)
from paseo_hookspecs.context import DaemonContext
from paseo_hookspecs.events import PermissionRequest


class AllowEverything(AgentObserver):
    def __init__(self, agents: Agents, log: Path) -> None:
        self._agents = agents
        self._log = log

    async def _write(self, *fields: Any) -> None:
        line = json.dumps(list(fields)) + "\n"

        def append() -> None:
            with self._log.open("a", encoding="utf-8") as out:
                out.write(line)

        await asyncio.to_thread(append)

    async def on_record(self, change: RecordChange) -> None:
        await self._write("record", change.record.id, change.kind)

    async def on_permission_requested(self, agent_id: str, request: PermissionRequest) -> None:
        await self._write("requested", agent_id, request.id)
        await self._agents.answer_permission(
            agent_id, request.id, PermissionAnswer(behavior="allow")
        )

    async def on_permission_resolved(
        self, agent_id: str, request_id: str, outcome: PermissionOutcome
    ) -> None:
        await self._write("resolved", agent_id, request_id, outcome.behavior if outcome else None)

    async def on_attention(self, agent_id: str, reason: str, timestamp: str) -> None:
        await self._write("attention", agent_id, reason)


_subscription: Subscription | None = None


@hookimpl
def paseo_startup(context: DaemonContext) -> None:
    global _subscription
    observer = AllowEverything(context.agents, context.home / "porttest.jsonl")
    _subscription = context.agents.subscribe(observer, name="porttest")


@hookimpl
def paseo_shutdown(context: DaemonContext) -> None:
    if _subscription is not None:
        _subscription.close()
