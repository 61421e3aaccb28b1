"""A plugin's lines in ``paseo daemon status``: its state in a word and a sentence, with detail.

A plugin that keeps something running on its own — notification sinks, a relay connection —
registers a :class:`StatusSection` (``paseo_register_status_sections``). ``server.status``
calls each section's ``report`` (bounded: one that raises or takes longer than a second is shown
as ``unknown`` with the reason, never failing the status) and returns it under
``sections.<name>``; the CLI prints the headline, ``-o json`` everything.

.. versionadded:: 2.0
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

StatusState = Literal["ok", "warn", "fail", "off", "unknown"]
"""``ok``: working; ``warn``: working with trouble (a sink failing, a relay reconnecting);
``fail``: not working; ``off``: turned off by configuration; ``unknown``: the report failed."""


@dataclass(frozen=True)
class StatusReport:
    """What a section says now. ``details`` must be JSON-serialisable and hold no secret."""

    state: StatusState
    headline: str
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StatusSection:
    """``name`` is the key under ``sections`` (unique; the plugin's id is a good choice)."""

    name: str
    report: Callable[[], Awaitable[StatusReport]]


class StatusSectionRegistrar(Protocol):
    def __call__(self, section: StatusSection) -> None:
        """Register a section; a name already registered is refused."""


__all__ = ["StatusReport", "StatusSection", "StatusSectionRegistrar", "StatusState"]
