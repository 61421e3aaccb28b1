"""TEMPORARY: builds the skills service from the daemon until the composition root does.

Listed in :data:`paseo.daemon.services.SERVICE_FACTORIES`; the module-level ``rpc_groups`` and
``notifications`` are what the protocol schema generator reads there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paseo.services import ServiceRef
from paseo.skills.rpc import method_groups, notifications, rpc_groups
from paseo.skills.service import SkillsService

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup

    from paseo.config import ResolvedConfig


class _Daemon(Protocol):
    @property
    def config(self) -> Any: ...

    @property
    def options(self) -> Any: ...


class _LiveConfig:
    """The daemon's configuration at the moment of use (``paseo reload`` replaces it)."""

    def __init__(self, daemon: _Daemon) -> None:
        self._daemon = daemon

    @property
    def resolved(self) -> ResolvedConfig:
        resolved: ResolvedConfig = self._daemon.config.resolved
        return resolved


class _SkillsAdapter:
    """The daemon's view of the service: its method groups and lifecycle."""

    name = "skills"

    def __init__(self, service: SkillsService) -> None:
        self.service = service
        self.ref: ServiceRef[SkillsService] = ServiceRef("skills")
        self.ref.bind(service)

    def rpc_groups(self) -> list[RpcMethodGroup]:
        return method_groups(self.ref)

    async def start(self) -> None:
        await self.service.start()

    async def stop(self) -> None:
        await self.service.stop()


def create(daemon: _Daemon) -> _SkillsAdapter:
    """Service factory (see :mod:`paseo.daemon.services`): ``HOME`` of the daemon is ``~``."""
    env = daemon.options.env
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    return _SkillsAdapter(SkillsService(config=_LiveConfig(daemon), home_dir=home))


__all__ = ["create", "notifications", "rpc_groups"]
