"""Pushes that follow ``config.json`` changes, as the TypeScript daemon pushes them.

The session follows the daemon's ``config`` stream once its ``hello`` is answered. A
``config.changed`` (any client's ``config.patch``, ``paseo config set`` then ``paseo reload``)
touching the mutable settings (``agents.providers.*``, the MCP ``injectIntoAgents``) is pushed
as ``status:daemon_config_changed`` with the settings view (secrets hidden, as for
``get_daemon_config_request``), so every open settings screen follows.

The voice capabilities are not re-sent on a change: every speech setting (``features.*``,
``providers.local.*``) is restart-only here (``config.reload``), so the running daemon's
capabilities change only with a restart, after which the client says ``hello`` again.
"""

from __future__ import annotations

import logging
from typing import Any

from paseo_tswire import handshake
from paseo_tswire.bridge import RpcFailure
from paseo_tswire.connection import ClientSession
from paseo_tswire.handlers import settings, voice
from paseo_tswire.models import settings as st
from paseo_tswire.models.messages import ServerInfo

log = logging.getLogger("paseo.tswire")

EXTRA_KEY = "config_watch"
SETTINGS_PREFIXES = ("agents.providers", "plugins.mcp", "daemon.mcp")


def _touches(paths: list[str], prefixes: tuple[str, ...]) -> bool:
    return any(path.startswith(prefixes) for path in paths)


class ConfigWatch:
    """One session's reaction to ``config.changed``."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method != "config.changed":
            return
        changed = [str(p) for p in params.get("changed") or []]
        if not _touches(changed, SETTINGS_PREFIXES):
            return
        try:
            got = await self.session.call("config.get", {})
            await self.session.push(
                "status", st.DaemonConfigChanged(config=settings.daemon_view(got))
            )
        except RpcFailure as exc:
            log.debug("tswire: no push after config.changed: %s", exc)


async def server_info(session: ClientSession, server_id: str, version: str) -> ServerInfo:
    """The ``server_info`` answering ``hello``; from then on the session follows ``config``."""
    info = handshake.server_info(server_id, version, await voice.capabilities(session))
    if isinstance(session.extra.get(EXTRA_KEY), ConfigWatch):
        return info  # a reattached session follows already
    watch = ConfigWatch(session)
    session.extra[EXTRA_KEY] = watch
    session.listeners.append(watch.on_notification)
    try:
        await session.follow(["config"])
    except RpcFailure as exc:
        log.debug("tswire: config changes are not followed: %s", exc)
    return info
