"""The Python client of the Paseo daemon.

:class:`PaseoClient` is the typed async client (reconnects with backoff, delivers
notifications, detects gaps in stream sequence numbers); :class:`SyncClient` wraps it for
synchronous code. :func:`discover` finds the daemon the way the CLI does.

Names are imported on first use so ``paseo.client.discovery`` and ``paseo.client.quick`` (the
CLI's fast paths) never pull in asyncio, websockets or pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paseo.client.client import PaseoClient
    from paseo.client.discovery import DaemonTarget, discover
    from paseo.client.sync import SyncClient
    from paseo.rpc.errors import DaemonNotRunning

_EXPORTS = {
    "PaseoClient": "paseo.client.client",
    "SyncClient": "paseo.client.sync",
    "DaemonTarget": "paseo.client.discovery",
    "DaemonNotRunning": "paseo.rpc.errors",
    "discover": "paseo.client.discovery",
}

__all__ = ["DaemonNotRunning", "DaemonTarget", "PaseoClient", "SyncClient", "discover"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'paseo.client' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
