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
    from paseo_hookspecs.plugin_records import PluginRecordRepository
    from paseo_hookspecs.providers import ProviderCatalog


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

    @property
    def providers(self) -> ProviderCatalog:
        """The agent providers' models and modes (:mod:`paseo_hookspecs.providers`).

        .. versionadded:: 2.0
        """

    def config_section(self, plugin_id: str) -> Any:
        """The validated settings model of ``plugin_id`` (``None`` when it has none)."""

    def plugin_records(self, plugin_id: str, collection: str) -> PluginRecordRepository:
        """The collection ``collection`` of the records ``plugin_id`` keeps in the store
        (:mod:`paseo_hookspecs.plugin_records`): bound to that namespace, it reaches no other
        plugin's. ``InvalidParams`` for a malformed name, ``Unavailable`` when the store
        driver keeps no plugin records.

        .. versionadded:: 2.1
        """


class RpcContext(Protocol):
    """Per-call context handed to RPC handlers."""

    @property
    def daemon(self) -> DaemonContext:
        """The running daemon."""

    @property
    def session_kind(self) -> str:
        """``local``, ``remote`` or ``hub`` — decided from what the server observed."""

    @property
    def trusted_local(self) -> bool:
        """The call comes from a person at this machine: a ``local`` session whose transport
        the server observed to be local (a unix socket, or a loopback peer — a forwarded
        address counts only behind a trusted proxy) and that carried no browser ``Origin``.
        Nothing the client said in ``server.hello`` counts. ``False`` for calls the daemon
        makes on an agent's behalf (e.g. an MCP tool call). Guard operations a web page or
        an agent must not reach with it (``paseo hub connect`` does).

        .. versionadded:: 2.0
        """

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
