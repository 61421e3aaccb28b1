"""What the daemon shows plugins at run time.

These are Protocols: the kernel implements them, plugins only read them. They stay small on
purpose so the kernel can evolve behind them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from paseo_hookspecs.agents import Agents
    from paseo_hookspecs.interfaces.store import Store


class DaemonContext(Protocol):
    """The running daemon, as handed to lifecycle hooks."""

    @property
    def home(self) -> Path:
        """The state root (``$PASEO_HOME``)."""

    @property
    def server_id(self) -> str:
        """The stable ``srv_…`` identifier of this home."""

    @property
    def version(self) -> str:
        """The running Paseo version."""

    @property
    def log(self) -> logging.Logger:
        """The daemon's logger; plugins should log through ``log.getChild(name)``."""

    @property
    def store(self) -> Store:
        """The chosen store driver, open."""

    @property
    def agents(self) -> Agents:
        """The daemon's agents: drive them and observe them (:mod:`paseo_hookspecs.agents`).

        .. versionadded:: 2.0
        """

    def config_section(self, plugin_id: str) -> Any:
        """The validated settings model of ``plugin_id`` (``None`` when it has none)."""


class RpcContext(Protocol):
    """Per-call context handed to RPC handlers."""

    @property
    def daemon(self) -> DaemonContext:
        """The running daemon."""

    @property
    def session_kind(self) -> str:
        """``local``, ``remote`` or ``hub`` — decided from what the server observed."""

    @property
    def client_id(self) -> str:
        """The client id given in ``server.hello`` (a label, never a source of trust)."""

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Push a notification to this connection only."""

    def subscribe(self, streams: Sequence[str]) -> dict[str, int]:
        """Deliver ``streams`` to this connection from now on (as ``server.subscribe`` does);
        each stream's current ``seq``. Raises ``NotFound`` for an unknown stream and
        ``AccessDenied`` for one this session kind may not read; then nothing changes."""

    def unsubscribe(self, streams: Sequence[str]) -> list[str]:
        """Stop delivering ``streams`` to this connection; the ones that were subscribed."""
