"""Terminals: workspace-scoped programs on PTYs that the daemon keeps, captures and streams.

Other rooms use :class:`TerminalService` (built by the composition root with a store, a
publisher, the config view, a :class:`TerminalPlacement` and a :class:`ProfileSource`) and its
``activity(workspace_id)`` for workspace status.
"""

from __future__ import annotations

from paseo.terminals.profiles import ProfileSource, no_provider_profiles
from paseo.terminals.service import (
    STREAM,
    TerminalPlacement,
    TerminalService,
    TerminalStore,
    stream_of,
)

__all__ = [
    "STREAM",
    "ProfileSource",
    "TerminalPlacement",
    "TerminalService",
    "TerminalStore",
    "no_provider_profiles",
    "stream_of",
]
