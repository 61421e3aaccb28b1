"""Terminal profiles: a named command a client offers when it opens a terminal.

The user lists their own in ``daemon.terminalProfiles`` of ``config.json``; when that key is
absent, each installed agent provider offers the profile that starts its agent program (for
example ``claude`` with the typed prompt as its argument). Both are this model, so a provider
builds exactly what a user would write::

    from paseo_hookspecs.terminals import PROMPT_SENTINEL, TerminalProfile

    TerminalProfile(id="claude", name="Claude Code", command="claude", args=[PROMPT_SENTINEL])
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

PROMPT_SENTINEL = "{{{prompt}}}"
"""Where a typed prompt goes in a profile's ``command`` or ``args``. An ``args`` entry holding
it is dropped whole when no prompt is typed, so an option such as ``--prompt={{{prompt}}}``
belongs in one entry."""


class TerminalProfile(BaseModel):
    """A named command offered when opening a terminal (``daemon.terminalProfiles[]``)."""

    # The shape of config.json: unknown keys are refused and values are not coerced.
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    id: Annotated[str, StringConstraints(min_length=1)]
    name: Annotated[str, StringConstraints(min_length=1)]
    """What a client shows."""
    command: str
    args: list[str] | None = None
    icon: str | None = None
    """An icon name a client may know (``claude``, ``codex``, …)."""


__all__ = ["PROMPT_SENTINEL", "TerminalProfile"]
